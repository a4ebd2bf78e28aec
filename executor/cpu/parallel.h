// Intra-op parallelism for the CPU kernels: one process-wide pool of worker threads and
// parallel_for over index ranges.
//
//   parallel_for(rows, /*grain=*/1, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) normalize_row(r);
//   });
//
// How many threads a kernel may use is a per-calling-thread setting: run_model sets it for the
// run (RunOptions::threads) with ScopedIntraOpThreads; outside a run it is 1, so kernels called
// directly stay serial. The chunks depend only on (n, grain, thread count), never on timing, and
// kernels only split work whose elements are computed independently (no reduction is split), so
// a result does not depend on which thread computed which chunk. A parallel_for inside a chunk,
// or while another thread uses the pool, runs serially on the calling thread.
#pragma once

#include <cstdint>
#include <functional>

namespace xopt::exec {

// Threads the kernels running on this thread may use (at least 1).
int intra_op_threads();

// XOPT_NUM_THREADS when set to a positive number, else the number of hardware threads.
int default_intra_op_threads();

// Sets intra_op_threads() for the calling thread for the guard's lifetime (n < 1 means 1).
class ScopedIntraOpThreads {
 public:
  explicit ScopedIntraOpThreads(int n);
  ~ScopedIntraOpThreads();
  ScopedIntraOpThreads(const ScopedIntraOpThreads&) = delete;
  ScopedIntraOpThreads& operator=(const ScopedIntraOpThreads&) = delete;

 private:
  int saved_;
};

// How many chunks parallel_for(n, grain, ...) makes: min(threads, n / grain), at least 1 when
// n > 0.
int64_t parallel_chunks(int64_t n, int64_t grain);

// Splits [0, n) into parallel_chunks(n, grain) contiguous chunks of near-equal size and calls
// fn(begin, end) for each, in parallel; returns when every chunk is done.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace xopt::exec
