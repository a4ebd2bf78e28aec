// Gather kernels (see gather.cuh). Gather copies rows of `inner` elements, widened to words of up
// to 16 bytes where the row size and the addresses allow it (an embedding lookup moves float4s).
#include <cstdint>

#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/gather.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

template <typename J>
__device__ __forceinline__ int64_t fix_index(J raw, int64_t dim) {
  int64_t i = static_cast<int64_t>(raw);
  if (i < 0) i += dim;
  if (i < 0) i = 0;
  if (i >= dim) i = dim - 1;
  return i;
}

template <typename T, typename J>
__global__ void gather_kernel(const T* x, const J* idx, T* y, GatherPlan p) {
  const int64_t per_outer = p.n_idx * p.inner;
  const int64_t n = p.outer * per_outer;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const int64_t o = i / per_outer, r = i % per_outer;
    const int64_t k = r / p.inner, e = r % p.inner;
    const int64_t j = fix_index(idx[k], p.dim);
    y[i] = x[(o * p.dim + j) * p.inner + e];
  }
}

template <typename T>
cudaError_t run_gather(const void* x, const void* idx, bool i64, void* y, const GatherPlan& p,
                       cudaStream_t s) {
  const unsigned g = grid_for(p.outer * p.n_idx * p.inner);
  if (i64)
    gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const int64_t*>(idx),
                                         static_cast<T*>(y), p);
  else
    gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const int32_t*>(idx),
                                         static_cast<T*>(y), p);
  return cudaGetLastError();
}

template <typename T, typename J>
__global__ void gather_elements_kernel(const T* x, const J* idx, T* y, IndexPlan p, int64_t dim,
                                       int64_t axis_stride) {
  const int64_t n = p.numel;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    int64_t off[2];
    dev::plan_offsets<2>(p, i, off);
    y[i] = x[off[0] + fix_index(idx[off[1]], dim) * axis_stride];
  }
}

template <typename T>
cudaError_t run_gather_elements(const void* x, const void* idx, bool i64, void* y,
                                const IndexPlan& p, int64_t dim, int64_t axis_stride,
                                cudaStream_t s) {
  const unsigned g = grid_for(p.numel);
  if (i64)
    gather_elements_kernel<<<g, kThreads, 0, s>>>(static_cast<const T*>(x),
                                                  static_cast<const int64_t*>(idx),
                                                  static_cast<T*>(y), p, dim, axis_stride);
  else
    gather_elements_kernel<<<g, kThreads, 0, s>>>(static_cast<const T*>(x),
                                                  static_cast<const int32_t*>(idx),
                                                  static_cast<T*>(y), p, dim, axis_stride);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gather(const void* x, const void* idx, bool i64, void* y, size_t es,
                          const GatherPlan& plan, cudaStream_t s) {
  if (plan.outer * plan.n_idx * plan.inner == 0) return cudaSuccess;
  GatherPlan p = plan;
  while (es < 16 && p.inner % 2 == 0 && dev::aligned(x, es * 2) && dev::aligned(y, es * 2)) {
    p.inner /= 2;
    es *= 2;
  }
  switch (es) {
    case 1:
      return run_gather<uint8_t>(x, idx, i64, y, p, s);
    case 2:
      return run_gather<uint16_t>(x, idx, i64, y, p, s);
    case 4:
      return run_gather<uint32_t>(x, idx, i64, y, p, s);
    case 8:
      return run_gather<uint2>(x, idx, i64, y, p, s);
    case 16:
      return run_gather<uint4>(x, idx, i64, y, p, s);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_gather_elements(const void* x, const void* idx, bool i64, void* y, size_t es,
                                   const IndexPlan& p, int64_t dim, int64_t axis_stride,
                                   cudaStream_t s) {
  if (p.numel == 0) return cudaSuccess;
  switch (es) {
    case 1:
      return run_gather_elements<uint8_t>(x, idx, i64, y, p, dim, axis_stride, s);
    case 2:
      return run_gather_elements<uint16_t>(x, idx, i64, y, p, dim, axis_stride, s);
    case 4:
      return run_gather_elements<uint32_t>(x, idx, i64, y, p, dim, axis_stride, s);
    case 8:
      return run_gather_elements<uint64_t>(x, idx, i64, y, p, dim, axis_stride, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace xopt::cuda
