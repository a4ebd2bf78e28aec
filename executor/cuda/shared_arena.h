// Device memory several sessions share (planner/shared_arena.h): one activation arena and one
// workspace region sized for the largest member, allocated once, and a claim that lets one session
// run on them at a time. A second session that tries to run while another holds the claim gets an
// error naming the group, never a run on bytes another model is using. The members also share one
// stream and one set of cuDNN / cuBLASLt handles (they run one at a time), so the group's device
// memory beyond one context is its planned regions and each member's parameters and I/O.
#pragma once

#include <atomic>
#include <memory>

#include "common/status.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/kernel.h"
#include "planner/shared_arena.h"

namespace xopt::cuda {

class SharedDeviceArena {
 public:
  static Result<std::shared_ptr<SharedDeviceArena>> create(const planner::SharedArena& shared);
  SharedDeviceArena() = default;
  ~SharedDeviceArena();
  SharedDeviceArena(const SharedDeviceArena&) = delete;
  SharedDeviceArena& operator=(const SharedDeviceArena&) = delete;

  const planner::SharedArena& shared() const { return shared_; }
  void* arena() const { return arena_.data(); }
  void* workspace() const { return workspace_.data(); }
  // The members' stream and library handles (created with the group, destroyed with it).
  cudaStream_t stream() const { return stream_; }
  const Handles& handles() const { return handles_; }

  // True when the caller now holds the arena (release() gives it back); false when another holds
  // it.
  bool try_acquire() { return !busy_.exchange(true); }
  void release() { busy_.store(false); }

 private:
  planner::SharedArena shared_;
  DeviceBuffer arena_, workspace_;
  cudaStream_t stream_ = nullptr;
  Handles handles_;
  std::atomic<bool> busy_{false};
};

}  // namespace xopt::cuda
