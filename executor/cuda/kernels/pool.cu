// Device code for pool.cuh: one thread per output element walks its window.
#include <cfloat>

#include "executor/cuda/kernels/lowp.cuh"
#include "executor/cuda/kernels/pool.cuh"

namespace xopt::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void pool_kernel(const T* x, T* y, int64_t total, PoolGeom g) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t o[3] = {0, 0, 0};
    int64_t rest = idx;
    for (int d = g.rank - 1; d >= 0; --d) {
      o[d] = rest % g.out[d];
      rest /= g.out[d];
    }
    int64_t in_size = 1;
    for (int d = 0; d < g.rank; ++d) in_size *= g.in[d];
    const T* xs = x + rest * in_size;
    // Per dim: first input index, taps, and the padded-count divisor factor.
    int64_t start[3] = {0, 0, 0}, k[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, in[3] = {1, 1, 1};
    int64_t padded = 1;
    for (int d = 0; d < g.rank; ++d) {
      start[d] = o[d] * g.stride[d] - g.pad_begin[d];
      k[d] = g.kernel[d];
      dil[d] = g.dilation[d];
      in[d] = g.in[d];
      int64_t p = 0;
      for (int64_t j = 0; j < k[d]; ++j)
        if (start[d] + j * dil[d] < g.in[d] + g.pad_end[d]) ++p;
      padded *= p;
    }
    float best = -FLT_MAX;
    bool any = false;
    float acc = 0.0f;
    int64_t count = 0;
    for (int64_t a = 0; a < k[0]; ++a) {
      const int64_t i0 = start[0] + a * dil[0];
      if (i0 < 0 || i0 >= in[0]) continue;
      for (int64_t b = 0; b < k[1]; ++b) {
        const int64_t i1 = start[1] + b * dil[1];
        if (i1 < 0 || i1 >= in[1]) continue;
        for (int64_t c = 0; c < k[2]; ++c) {
          const int64_t i2 = start[2] + c * dil[2];
          if (i2 < 0 || i2 >= in[2]) continue;
          const float v = dev::load(xs[(i0 * in[1] + i1) * in[2] + i2]);
          if (g.max) {
            if (!any || v > best) best = v;
            any = true;
          } else {
            acc += v;
          }
          ++count;
        }
      }
    }
    if (g.max) {
      y[idx] = dev::store<T>(best);
    } else {
      const int64_t div = g.count_include_pad ? padded : count;
      y[idx] = dev::store<T>(acc / static_cast<float>(div));
    }
  }
}

}  // namespace

cudaError_t launch_pool(ElemType t, const void* x, void* y, int64_t nc, const PoolGeom& geom,
                        cudaStream_t stream) {
  if (geom.rank < 1 || geom.rank > 3) return cudaErrorInvalidValue;
  // Spatial dims right-aligned into three (leading unit dims).
  PoolGeom g{};
  g.rank = 3;
  g.max = geom.max;
  g.count_include_pad = geom.count_include_pad;
  const int shift = 3 - geom.rank;
  for (int d = 0; d < 3; ++d) {
    g.in[d] = g.out[d] = g.kernel[d] = g.stride[d] = g.dilation[d] = 1;
    g.pad_begin[d] = g.pad_end[d] = 0;
  }
  int64_t total = nc;
  for (int d = 0; d < geom.rank; ++d) {
    g.in[d + shift] = geom.in[d];
    g.out[d + shift] = geom.out[d];
    g.kernel[d + shift] = geom.kernel[d];
    g.stride[d + shift] = geom.stride[d];
    g.dilation[d + shift] = geom.dilation[d];
    g.pad_begin[d + shift] = geom.pad_begin[d];
    g.pad_end[d + shift] = geom.pad_end[d];
    total *= geom.out[d];
  }
  if (total == 0) return cudaSuccess;
  int64_t blocks = (total + kThreads - 1) / kThreads;
  if (blocks > 65535 * 16) blocks = 65535 * 16;
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    pool_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), total, g);
    return cudaGetLastError();
  });
}

}  // namespace xopt::cuda
