// Device code for batchnorm.cuh: one block row per (n, channel) plane, its coefficients computed
// once per thread from the channel's parameters.
#include "executor/cuda/kernels/batchnorm.cuh"
#include "executor/cuda/kernels/lowp.cuh"

namespace xopt::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void batch_norm_kernel(const T* x, T* y, const T* scale, const T* bias, const T* mean,
                                  const T* var, double epsilon, int64_t n, int64_t channels,
                                  int64_t inner) {
  const int64_t planes = n * channels;
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const int64_t c = p % channels;
    const double a = static_cast<double>(dev::load(scale[c])) /
                     sqrt(static_cast<double>(dev::load(var[c])) + epsilon);
    const float ca = static_cast<float>(a);
    const float cc = static_cast<float>(static_cast<double>(dev::load(bias[c])) -
                                        static_cast<double>(dev::load(mean[c])) * a);
    const T* xp = x + p * inner;
    T* yp = y + p * inner;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < inner;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
      yp[i] = dev::store<T>(dev::load(xp[i]) * ca + cc);
  }
}

}  // namespace

cudaError_t launch_batch_norm(ElemType t, const void* x, void* y, const void* scale,
                              const void* bias, const void* mean, const void* var, double epsilon,
                              int64_t n, int64_t channels, int64_t inner, cudaStream_t stream) {
  const int64_t planes = n * channels;
  if (planes == 0 || inner == 0) return cudaSuccess;
  int64_t bx = (inner + kThreads - 1) / kThreads;
  if (bx > 1024) bx = 1024;
  const int64_t by = planes < 65535 ? planes : 65535;
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    batch_norm_kernel<<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)), kThreads, 0,
                        stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                  static_cast<const T*>(scale), static_cast<const T*>(bias),
                                  static_cast<const T*>(mean), static_cast<const T*>(var), epsilon,
                                  n, channels, inner);
    return cudaGetLastError();
  });
}

}  // namespace xopt::cuda
