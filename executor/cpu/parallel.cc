#include "executor/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace xopt::exec {
namespace {

thread_local int tl_threads = 1;
// True on pool workers and on a caller while it runs chunks: nested parallel_for runs serially.
thread_local bool tl_in_pool = false;

// Workers spin this long for the next job before they sleep: kernels of one run follow each other
// within microseconds, and a futex wake-up costs more than that.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// One parallel_for: tasks 0..n-1 handed out through `next`. Workers hold a shared_ptr, so a worker
// that wakes late finds the job exhausted instead of a dangling one.
//
// Sleepers wait on condition variables whose predicates are checked under the same mutex the
// waker holds, so no wake-up is lost (the pool's exit hung once a worker missed the stop).
struct Job {
  const std::function<void(int64_t)>* task = nullptr;
  int64_t n = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::condition_variable finished;

  // Runs tasks until none is left.
  void work() {
    for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      (*task)(i);
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
        std::lock_guard<std::mutex> lock(mu);  // the waiter checks `done` under it: no lost wake-up
        finished.notify_all();
      }
    }
  }

  void wait() {
    const auto spin_end = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0; done.load(std::memory_order_acquire) < n; ++i) {
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > spin_end) {
        std::unique_lock<std::mutex> lock(mu);
        finished.wait(lock, [&] { return done.load(std::memory_order_acquire) >= n; });
        return;
      }
      cpu_relax();
    }
  }
};

class Pool {
 public:
  static Pool& get() {
    static Pool pool;
    return pool;
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(job_mu_);
      stop_.store(true, std::memory_order_release);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // Runs task(0..n-1) on the caller and up to threads - 1 workers. False when another thread is
  // using the pool (the caller then runs the tasks itself).
  bool run(int threads, int64_t n, const std::function<void(int64_t)>& task) {
    std::unique_lock<std::mutex> submit(submit_mu_, std::try_to_lock);
    if (!submit.owns_lock()) return false;
    ensure_workers(threads - 1);
    auto job = std::make_shared<Job>();
    job->task = &task;
    job->n = n;
    {
      std::lock_guard<std::mutex> lock(job_mu_);
      job_ = job;
      wanted_ = threads - 1;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    tl_in_pool = true;
    job->work();
    tl_in_pool = false;
    job->wait();
    std::lock_guard<std::mutex> lock(job_mu_);
    job_.reset();
    return true;
  }

 private:
  void ensure_workers(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      const int id = static_cast<int>(workers_.size());
      workers_.emplace_back([this, id] { worker(id); });
    }
  }

  void worker(int id) {
    tl_in_pool = true;
    uint32_t seen = generation_.load(std::memory_order_acquire);
    for (;;) {
      const auto spin_end = std::chrono::steady_clock::now() + kSpin;
      uint32_t g;
      // A worker that starts late can first read the generation the stop already bumped: it must
      // look at stop_ too, or it would wait for a generation that never comes.
      for (int i = 0; (g = generation_.load(std::memory_order_acquire)) == seen &&
                      !stop_.load(std::memory_order_acquire);
           ++i) {
        if ((i & 63) == 63 && std::chrono::steady_clock::now() > spin_end) {
          // generation_ and stop_ change only under job_mu_: checked under it, no wake-up is lost.
          std::unique_lock<std::mutex> lock(job_mu_);
          wake_.wait(lock, [&] {
            return stop_.load(std::memory_order_acquire) ||
                   generation_.load(std::memory_order_acquire) != seen;
          });
        } else {
          cpu_relax();
        }
      }
      seen = g;
      std::shared_ptr<Job> job;
      {
        std::lock_guard<std::mutex> lock(job_mu_);
        if (stop_.load(std::memory_order_acquire)) return;
        if (id < wanted_) job = job_;
      }
      if (job) job->work();
    }
  }

  std::mutex submit_mu_;  // one parallel_for at a time
  std::mutex job_mu_;     // guards job_, wanted_, stop_
  std::shared_ptr<Job> job_;
  int wanted_ = 0;  // workers 0..wanted_-1 take part in the current job
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> generation_{0};  // bumped (under job_mu_) for every job and for stop
  std::condition_variable wake_;         // sleeping workers wait here for generation_ to move
  std::vector<std::thread> workers_;
};

}  // namespace

int intra_op_threads() {
  return tl_threads;
}

int default_intra_op_threads() {
  if (const char* s = std::getenv("XOPT_NUM_THREADS"); s != nullptr) {
    const long v = std::strtol(s, nullptr, 10);
    if (v > 0) return static_cast<int>(std::min<long>(v, 256));
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

ScopedIntraOpThreads::ScopedIntraOpThreads(int n) : saved_(tl_threads) {
  tl_threads = std::max(1, n);
}

ScopedIntraOpThreads::~ScopedIntraOpThreads() {
  tl_threads = saved_;
}

int64_t parallel_chunks(int64_t n, int64_t grain) {
  if (n <= 0) return 0;
  const int64_t by_grain = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  return std::min<int64_t>(tl_threads, by_grain);
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t chunks = parallel_chunks(n, grain);
  if (chunks == 0) return;
  auto chunk = [&](int64_t i) { fn(n * i / chunks, n * (i + 1) / chunks); };
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  const std::function<void(int64_t)> task = chunk;
  if (tl_in_pool || !Pool::get().run(static_cast<int>(chunks), chunks, task))
    for (int64_t i = 0; i < chunks; ++i) chunk(i);
}

}  // namespace xopt::exec
