// CUDA, cuDNN and cuBLAS(Lt) return codes as Status. The library never aborts on a device error:
// it returns it, naming the call.
//
//   XOPT_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(...));
//   XOPT_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(...));
//   XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatmul(...));
//   return check_launch(cudaGetLastError());   // after a <<<...>>> launch
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "common/status.h"

namespace xopt::cuda {

inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return internal_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                        cudaGetErrorString(e) + ")");
}
inline Status cudnn_status(cudnnStatus_t e, const char* what) {
  if (e == CUDNN_STATUS_SUCCESS) return Status::ok();
  return internal_error(std::string(what) + ": " + cudnnGetErrorString(e));
}
inline Status cublas_status(cublasStatus_t e, const char* what) {
  if (e == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return internal_error(std::string(what) + ": cuBLAS status " +
                        std::to_string(static_cast<int>(e)));
}
// After a kernel launch: the launcher returns cudaGetLastError().
inline Status check_launch(cudaError_t e) {
  return cuda_status(e, "kernel launch");
}

}  // namespace xopt::cuda

#define XOPT_CUDA_RETURN_IF_ERROR(call) \
  XOPT_RETURN_IF_ERROR(::xopt::cuda::cuda_status((call), #call))
#define XOPT_CUDNN_RETURN_IF_ERROR(call) \
  XOPT_RETURN_IF_ERROR(::xopt::cuda::cudnn_status((call), #call))
#define XOPT_CUBLAS_RETURN_IF_ERROR(call) \
  XOPT_RETURN_IF_ERROR(::xopt::cuda::cublas_status((call), #call))
