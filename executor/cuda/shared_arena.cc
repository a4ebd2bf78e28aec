#include "executor/cuda/shared_arena.h"

#include "executor/cuda/check.h"
#include "executor/cuda/cublaslt_lazy.h"

namespace xopt::cuda {

Result<std::shared_ptr<SharedDeviceArena>> SharedDeviceArena::create(
    const planner::SharedArena& shared) {
  auto a = std::make_shared<SharedDeviceArena>();
  a->shared_ = shared;
  XOPT_ASSIGN_OR_RETURN(a->arena_,
                        DeviceBuffer::allocate(shared.arena_bytes, "shared activation arena"));
  XOPT_ASSIGN_OR_RETURN(a->workspace_,
                        DeviceBuffer::allocate(shared.workspace_bytes, "shared workspace"));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&a->stream_, cudaStreamNonBlocking));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreate(&a->handles_.cudnn));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetStream(a->handles_.cudnn, a->stream_));
  XOPT_RETURN_IF_ERROR(load_cublaslt());
  XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&a->handles_.lt));
  return a;
}

SharedDeviceArena::~SharedDeviceArena() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (handles_.cudnn != nullptr) cudnnDestroy(handles_.cudnn);
  if (handles_.lt != nullptr) cublasLtDestroy(handles_.lt);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

}  // namespace xopt::cuda
