// The state of a loaded CUDA session (Session::Impl), shared by its load phases
// (executor/cuda/session_phases.h) and its runs (executor/cuda/session.cc). Internal to the CUDA
// executor and its tests.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cuda/check.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/session.h"
#include "executor/cuda/shared_arena.h"

namespace xopt::cuda {

// A graph input or output's host-visible staging buffer (pinned, so copies are true async DMA and
// can live inside the captured graph).
struct Staging {
  std::string name;     // the graph input or output (the session keeps no pointer into the model)
  DeviceTensor device;  // its slot on the device
  PinnedBuffer host;    // pinned host bytes of the same size
};

struct Session::Impl {
  Footprint footprint;
  cudaStream_t stream = nullptr;
  Handles handles;
  bool owns_stream = true;  // false: the shared arena's stream and handles
  cudaEvent_t start = nullptr, stop = nullptr;
  DeviceBuffer params, arena, workspace, io;
  std::shared_ptr<SharedDeviceArena> shared;  // when set, its arena and workspace are used
  void* arena_base() const { return shared ? shared->arena() : arena.data(); }
  void* workspace_base() const { return shared ? shared->workspace() : workspace.data(); }
  std::vector<Launch> launches;
  std::vector<size_t> workspace_of;  // per launch
  // Per launch: where its workspace starts, when the plan keeps workspace in the arena (nullptr:
  // the workspace region).
  std::vector<void*> workspace_at;
  void* workspace_of_launch(size_t i) {
    return workspace_at[i] != nullptr ? workspace_at[i] : workspace_base();
  }
  std::vector<std::string> node_names;  // describe() of each launch's node, for errors
  std::vector<std::string> node_ops;    // its op type, for profiles
  std::vector<Staging> inputs, outputs;
  cudaGraphExec_t graph_exec = nullptr;
  // run_device: the launches without the staging copies, captured on first use; the caller's
  // stream waits for `device_done`, the session's for `caller_ready`.
  cudaGraphExec_t device_graph_exec = nullptr;
  cudaEvent_t caller_ready = nullptr, device_done = nullptr;
  bool use_graph = true;
  size_t host_transfer_bytes = 0;

  // Parameter offload (planner/offload.h): weights in pinned host memory, copied into staging on
  // copy_stream. Per step k: the copies that leave before it (after step_done[prefetch - 1], or
  // the start of the inference), the copies it waits for (it is their first reader), and whether
  // a later copy waits for it to be done.
  struct Copy {
    void* device = nullptr;
    const void* host = nullptr;
    size_t bytes = 0;
    int prefetch_step = 0;
    cudaEvent_t done = nullptr;
  };
  DeviceBuffer staging;
  PinnedBuffer offload_host;
  cudaStream_t copy_stream = nullptr;
  cudaEvent_t inference_start = nullptr;
  std::vector<Copy> copies;
  std::vector<std::vector<size_t>> copies_before, waits_before;  // per step: copy indices
  std::vector<cudaEvent_t> step_done;                            // per step; nullptr: unused
  bool offloads() const { return !copies.empty(); }

  Impl() = default;
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Both streams: the copy stream joins the inference here (inside a capture too).
  Status offload_begin();
  // Before step k: its prefetches leave, and it waits for the copies it reads first.
  Status offload_before(size_t k);
  // After step k: a later copy that waits for it can go.
  Status offload_after(size_t k);

  // The whole inference, in order: inputs in (from the pinned staging, when `staging`), every
  // launch, outputs out.
  Status enqueue(bool staging = true);
  // enqueue(staging), captured into `exec`.
  Status capture(cudaGraphExec_t* exec, bool staging);

  // Holds the shared arena (if any) for one run; refuses when another session holds it.
  class Claim {
   public:
    explicit Claim(SharedDeviceArena* a) : a_(a != nullptr && a->try_acquire() ? a : nullptr) {}
    ~Claim() {
      if (a_ != nullptr) a_->release();
    }
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    bool held() const { return a_ != nullptr; }

   private:
    SharedDeviceArena* a_;
  };
  Status claim_error() const;

  // One inference: the graph replayed, or the launches enqueued directly.
  Status launch_once();
  // The launches alone (run_device: the caller's tensors are copied in and out around them).
  Status launch_without_staging();
};

}  // namespace xopt::cuda
