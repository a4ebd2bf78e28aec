// BatchNormalization in inference mode: y = x * a + c per channel with a = scale / sqrt(var + eps)
// and c = bias - mean * a computed in double from the four parameter vectors (as the CPU reference
// does), then applied in float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

// x, y: [n, channels, inner]; scale, bias, mean, var: [channels]; all of float type `t` (float32,
// float16, bfloat16: the coefficients are computed in double, the product in float).
cudaError_t launch_batch_norm(ElemType t, const void* x, void* y, const void* scale,
                              const void* bias, const void* mean, const void* var, double epsilon,
                              int64_t n, int64_t channels, int64_t inner, cudaStream_t stream);

}  // namespace xopt::cuda
