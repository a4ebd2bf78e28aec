// Concat / Split kernels (see concat_split.cuh).
#include <cstdint>

#include "executor/cuda/kernels/concat_split.cuh"
#include "executor/cuda/kernels/device_util.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

// The part owning joined column j (col[0] <= j < col[parts]).
__device__ __forceinline__ int part_of(const PartsPlan& p, int64_t j) {
  int lo = 0, hi = p.parts - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (p.col[mid] <= j)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

template <typename T, bool kConcat>
__global__ void parts_kernel(T* joined, PartsPlan p) {
  const int64_t width = p.col[p.parts] - p.col[0];
  const int64_t n = p.outer * width;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const int64_t o = i / width, j = p.col[0] + i % width;
    const int k = part_of(p, j);
    const int64_t w = p.col[k + 1] - p.col[k];
    T* part = static_cast<T*>(p.ptr[k]) + o * w + (j - p.col[k]);
    T* whole = joined + o * p.row + j;
    if (kConcat)
      *whole = *part;
    else
      *part = *whole;
  }
}

template <bool kConcat>
cudaError_t run(void* joined, const PartsPlan& plan, size_t es, cudaStream_t s) {
  const int64_t width = plan.col[plan.parts] - plan.col[0];
  if (plan.outer * width == 0) return cudaSuccess;
  // Widen the element while every column bound, the row and every address allow it.
  PartsPlan p = plan;
  while (es < 16) {
    bool ok = p.row % 2 == 0 && dev::aligned(joined, es * 2);
    for (int k = 0; k <= p.parts; ++k) ok = ok && p.col[k] % 2 == 0;
    for (int k = 0; k < p.parts; ++k) ok = ok && dev::aligned(p.ptr[k], es * 2);
    if (!ok) break;
    p.row /= 2;
    for (int k = 0; k <= p.parts; ++k) p.col[k] /= 2;
    es *= 2;
  }
  const unsigned g = grid_for(p.outer * (p.col[p.parts] - p.col[0]));
  switch (es) {
    case 1:
      parts_kernel<uint8_t, kConcat><<<g, kThreads, 0, s>>>(static_cast<uint8_t*>(joined), p);
      break;
    case 2:
      parts_kernel<uint16_t, kConcat><<<g, kThreads, 0, s>>>(static_cast<uint16_t*>(joined), p);
      break;
    case 4:
      parts_kernel<uint32_t, kConcat><<<g, kThreads, 0, s>>>(static_cast<uint32_t*>(joined), p);
      break;
    case 8:
      parts_kernel<uint2, kConcat><<<g, kThreads, 0, s>>>(static_cast<uint2*>(joined), p);
      break;
    case 16:
      parts_kernel<uint4, kConcat><<<g, kThreads, 0, s>>>(static_cast<uint4*>(joined), p);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_concat(void* joined, const PartsPlan& plan, size_t es, cudaStream_t s) {
  return run<true>(joined, plan, es, s);
}

cudaError_t launch_split(const void* joined, const PartsPlan& plan, size_t es, cudaStream_t s) {
  return run<false>(const_cast<void*>(joined), plan, es, s);
}

}  // namespace xopt::cuda
