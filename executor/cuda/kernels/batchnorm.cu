// Device code for batchnorm.cuh: one block row per (n, channel) plane, its coefficients computed
// once per thread from the channel's parameters.
#include "executor/cuda/kernels/batchnorm.cuh"

namespace xopt::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void batch_norm_kernel(const float* x, float* y, const float* scale, const float* bias,
                                  const float* mean, const float* var, double epsilon, int64_t n,
                                  int64_t channels, int64_t inner) {
  const int64_t planes = n * channels;
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const int64_t c = p % channels;
    const double a = static_cast<double>(scale[c]) / sqrt(static_cast<double>(var[c]) + epsilon);
    const float ca = static_cast<float>(a);
    const float cc = static_cast<float>(static_cast<double>(bias[c]) - mean[c] * a);
    const float* xp = x + p * inner;
    float* yp = y + p * inner;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < inner;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
      yp[i] = xp[i] * ca + cc;
  }
}

}  // namespace

cudaError_t launch_batch_norm(const float* x, float* y, const float* scale, const float* bias,
                              const float* mean, const float* var, double epsilon, int64_t n,
                              int64_t channels, int64_t inner, cudaStream_t stream) {
  const int64_t planes = n * channels;
  if (planes == 0 || inner == 0) return cudaSuccess;
  int64_t bx = (inner + kThreads - 1) / kThreads;
  if (bx > 1024) bx = 1024;
  const int64_t by = planes < 65535 ? planes : 65535;
  batch_norm_kernel<<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)), kThreads, 0,
                      stream>>>(x, y, scale, bias, mean, var, epsilon, n, channels, inner);
  return cudaGetLastError();
}

}  // namespace xopt::cuda
