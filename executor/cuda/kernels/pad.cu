// Pad and Trilu kernels (see pad.cuh).
#include <cstdint>
#include <cstring>

#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/pad.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

// The input coordinate (cropped extent) output coordinate j reads, or -1 for the constant.
__device__ __forceinline__ int64_t pad_source(int64_t j, int64_t m, PadMode mode) {
  if (j >= 0 && j < m) return j;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return j < 0 ? 0 : m - 1;
    case PadMode::kWrap:
      return ((j % m) + m) % m;
    case PadMode::kReflect: {
      if (m == 1) return 0;
      const int64_t period = 2 * (m - 1);
      j = ((j % period) + period) % period;
      return j >= m ? period - j : j;
    }
  }
  return -1;
}

template <typename T>
__global__ void pad_kernel(const T* x, T* y, PadPlan p, T value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.numel;
       i += stride) {
    int64_t r = i, off = 0;
    bool constant = false;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t o = r % p.out_dims[d];
      r /= p.out_dims[d];
      const int64_t j = pad_source(o - p.pad_begin[d], p.length[d], p.mode);
      if (j < 0) constant = true;
      off += (j + p.crop_begin[d]) * p.in_strides[d];
    }
    y[i] =
        constant ? (p.value_ptr != nullptr ? *static_cast<const T*>(p.value_ptr) : value) : x[off];
  }
}

template <typename T>
cudaError_t run_pad(const void* x, void* y, const PadPlan& p, cudaStream_t s) {
  T value;
  std::memcpy(&value, &p.value_bits, sizeof(T));
  pad_kernel<T><<<grid_for(p.numel), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                       p, value);
  return cudaGetLastError();
}

template <typename T>
__global__ void trilu_kernel(const T* x, T* y, int64_t n, int64_t rows, int64_t cols, int64_t k,
                             bool upper) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const int64_t j = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? j - r >= k : j - r <= k;
    y[i] = keep ? x[i] : T(0);
  }
}

template <typename T>
cudaError_t run_trilu(const void* x, void* y, int64_t n, int64_t rows, int64_t cols, int64_t k,
                      bool upper, cudaStream_t s) {
  trilu_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n,
                                                   rows, cols, k, upper);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_pad(const void* x, void* y, size_t es, const PadPlan& p, cudaStream_t s) {
  if (p.numel == 0) return cudaSuccess;
  switch (es) {
    case 1:
      return run_pad<uint8_t>(x, y, p, s);
    case 2:
      return run_pad<uint16_t>(x, y, p, s);
    case 4:
      return run_pad<uint32_t>(x, y, p, s);
    case 8:
      return run_pad<uint64_t>(x, y, p, s);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_trilu(const void* x, void* y, size_t es, int64_t batch, int64_t rows,
                         int64_t cols, int64_t k, bool upper, cudaStream_t s) {
  const int64_t n = batch * rows * cols;
  if (n == 0) return cudaSuccess;
  switch (es) {
    case 1:
      return run_trilu<uint8_t>(x, y, n, rows, cols, k, upper, s);
    case 2:
      return run_trilu<uint16_t>(x, y, n, rows, cols, k, upper, s);
    case 4:
      return run_trilu<uint32_t>(x, y, n, rows, cols, k, upper, s);
    case 8:
      return run_trilu<uint64_t>(x, y, n, rows, cols, k, upper, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace xopt::cuda
