// Strided copy kernels (see strided.cuh).
#include <cstdint>

#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/strided.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

template <typename T, typename I>
__global__ void strided_kernel(const T* src, T* dst, IndexPlan p) {
  const I n = static_cast<I>(p.numel);
  const I stride = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       i < n; i += stride) {
    I off[1];
    dev::plan_offsets<1>(p, i, off);
    dst[i] = src[off[0]];
  }
}

// Output dim c has source stride 1 and the output's last dim L does not: each block moves a 32x32
// tile of (c, L), reading along c and writing along L (both coalesced); blockIdx.z walks the other
// dims.
template <typename T>
__global__ void transpose_tiled_kernel(const T* src, T* dst, IndexPlan p, int c, int64_t n_outer) {
  __shared__ T tile[32][33];
  const int L = p.rank - 1;
  const int64_t dL = p.dims[L], dc = p.dims[c], sL = p.strides[0][L];
  int64_t dst_st[kMaxDims];
  int64_t s = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    dst_st[d] = s;
    s *= p.dims[d];
  }
  const int64_t L0 = static_cast<int64_t>(blockIdx.x) * 32,
                c0 = static_cast<int64_t>(blockIdx.y) * 32;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t q = blockIdx.z; q < n_outer; q += gridDim.z) {
    int64_t src_base = 0, dst_base = 0, r = q;
    for (int d = L - 1; d >= 0; --d) {
      if (d == c) continue;
      const int64_t cd = r % p.dims[d];
      r /= p.dims[d];
      src_base += cd * p.strides[0][d];
      dst_base += cd * dst_st[d];
    }
    for (int j = ty; j < 32; j += 8) {
      const int64_t ic = c0 + tx, iL = L0 + j;
      if (ic < dc && iL < dL) tile[j][tx] = src[src_base + ic + iL * sL];
    }
    __syncthreads();
    for (int j = ty; j < 32; j += 8) {
      const int64_t ic = c0 + j, iL = L0 + tx;
      if (ic < dc && iL < dL) dst[dst_base + ic * dst_st[c] + iL] = tile[tx][j];
    }
    __syncthreads();
  }
}

template <typename T>
cudaError_t run(const void* src, void* dst, const IndexPlan& p, cudaStream_t s) {
  const auto* ps = static_cast<const T*>(src);
  auto* pd = static_cast<T*>(dst);
  const int L = p.rank - 1;
  // A real transpose: some other dim is the source's contiguous one.
  int c = -1;
  if (p.rank >= 2 && p.strides[0][L] != 1 && p.dims[L] >= 8)
    for (int d = 0; d < L; ++d)
      if (p.strides[0][d] == 1 && p.dims[d] >= 8) c = d;
  if (c >= 0 && (p.dims[c] + 31) / 32 <= 65535 && (p.dims[L] + 31) / 32 < (int64_t{1} << 31)) {
    const int64_t n_outer = p.numel / (p.dims[c] * p.dims[L]);
    dim3 grid(static_cast<unsigned>((p.dims[L] + 31) / 32),
              static_cast<unsigned>((p.dims[c] + 31) / 32),
              static_cast<unsigned>(n_outer < 65535 ? n_outer : 65535));
    transpose_tiled_kernel<T><<<grid, dim3(32, 8), 0, s>>>(ps, pd, p, c, n_outer);
  } else if (dev::fits_int32(p)) {
    strided_kernel<T, int32_t><<<grid_for(p.numel), kThreads, 0, s>>>(ps, pd, p);
  } else {
    strided_kernel<T, int64_t><<<grid_for(p.numel), kThreads, 0, s>>>(ps, pd, p);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_strided_copy(const void* src, void* dst, size_t es, const IndexPlan& plan,
                                cudaStream_t s) {
  if (plan.numel == 0) return cudaSuccess;
  // Widen the element while the innermost run is contiguous and sizes and addresses allow it.
  IndexPlan p = plan;
  const int L = p.rank - 1;
  while (es < 16 && p.strides[0][L] == 1 && p.dims[L] % 2 == 0 && dev::aligned(src, es * 2) &&
         dev::aligned(dst, es * 2)) {
    bool ok = true;
    for (int d = 0; d < L; ++d) ok = ok && p.strides[0][d] % 2 == 0;
    if (!ok) break;
    for (int d = 0; d < L; ++d) p.strides[0][d] /= 2;
    p.dims[L] /= 2;
    p.numel /= 2;
    es *= 2;
  }
  switch (es) {
    case 1:
      return run<uint8_t>(src, dst, p, s);
    case 2:
      return run<uint16_t>(src, dst, p, s);
    case 4:
      return run<uint32_t>(src, dst, p, s);
    case 8:
      return run<uint2>(src, dst, p, s);
    case 16:
      return run<uint4>(src, dst, p, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace xopt::cuda
