#include "executor/cuda/shared_arena.h"

namespace xopt::cuda {

Result<std::shared_ptr<SharedDeviceArena>> SharedDeviceArena::create(
    const planner::SharedArena& shared) {
  auto a = std::make_shared<SharedDeviceArena>();
  a->shared_ = shared;
  XOPT_ASSIGN_OR_RETURN(a->arena_,
                        DeviceBuffer::allocate(shared.arena_bytes, "shared activation arena"));
  XOPT_ASSIGN_OR_RETURN(a->workspace_,
                        DeviceBuffer::allocate(shared.workspace_bytes, "shared workspace"));
  return a;
}

}  // namespace xopt::cuda
