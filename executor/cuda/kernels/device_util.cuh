// Device helpers shared by our own kernel families (kernels/*.cu only): launch geometry for
// grid-stride loops, warp and block reductions, and offset computation over an IndexPlan.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda::dev {

inline constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items (at least one, capped: the loop covers the rest).
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > 65536) b = 65536;
  return static_cast<unsigned>(b);
}

// Whether every pointer is aligned to `bytes`.
inline bool aligned(const void* p, size_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
// `scratch` holds 32 values; the function synchronizes so that it can be called again.
template <typename T>
__device__ __forceinline__ T block_sum(T v, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T r = lane < warps ? scratch[lane] : T(0);
  r = warp_sum(r);
  __syncthreads();
  return r;
}
__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_max(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = lane < warps ? scratch[lane] : -INFINITY;
  r = warp_max(r);
  __syncthreads();
  return r;
}

// Offsets of output element i in the first K operands of plan p.
template <int K, typename I>
__device__ __forceinline__ void plan_offsets(const IndexPlan& p, I i, I* off) {
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const I dim = static_cast<I>(p.dims[d]);
    const I c = i % dim;
    i /= dim;
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += c * static_cast<I>(p.strides[k][d]);
  }
}

// Whether 32-bit index math is exact for a plan: numel and every reachable offset fit in int32.
inline bool fits_int32(const IndexPlan& p) {
  if (p.numel >= (int64_t{1} << 31)) return false;
  for (int k = 0; k < p.operands; ++k) {
    int64_t hi = 0;
    for (int d = 0; d < p.rank; ++d) {
      const int64_t s = p.strides[k][d] < 0 ? -p.strides[k][d] : p.strides[k][d];
      hi += s * (p.dims[d] - 1);
    }
    if (hi >= (int64_t{1} << 31)) return false;
  }
  return true;
}

}  // namespace xopt::cuda::dev
