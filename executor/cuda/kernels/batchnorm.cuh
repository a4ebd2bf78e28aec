// BatchNormalization in inference mode: y = x * a + c per channel with a = scale / sqrt(var + eps)
// and c = bias - mean * a computed in double from the four parameter vectors (as the CPU reference
// does), then applied in float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace xopt::cuda {

// x, y: [n, channels, inner]; scale, bias, mean, var: [channels].
cudaError_t launch_batch_norm(const float* x, float* y, const float* scale, const float* bias,
                              const float* mean, const float* var, double epsilon, int64_t n,
                              int64_t channels, int64_t inner, cudaStream_t stream);

}  // namespace xopt::cuda
