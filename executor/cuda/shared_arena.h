// Device memory several sessions share (planner/shared_arena.h): one activation arena and one
// workspace region sized for the largest member, allocated once, and a claim that lets one session
// run on them at a time. A second session that tries to run while another holds the claim gets an
// error naming the group, never a run on bytes another model is using.
#pragma once

#include <atomic>
#include <memory>

#include "common/status.h"
#include "executor/cuda/device_memory.h"
#include "planner/shared_arena.h"

namespace xopt::cuda {

class SharedDeviceArena {
 public:
  static Result<std::shared_ptr<SharedDeviceArena>> create(const planner::SharedArena& shared);

  const planner::SharedArena& shared() const { return shared_; }
  void* arena() const { return arena_.data(); }
  void* workspace() const { return workspace_.data(); }

  // True when the caller now holds the arena (release() gives it back); false when another holds
  // it.
  bool try_acquire() { return !busy_.exchange(true); }
  void release() { busy_.store(false); }

 private:
  planner::SharedArena shared_;
  DeviceBuffer arena_, workspace_;
  std::atomic<bool> busy_{false};
};

}  // namespace xopt::cuda
