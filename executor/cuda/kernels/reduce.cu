// Reduction kernels (see reduce.cuh). A trailing reduction runs one warp per output (one block
// when an output reduces many elements); any other set of axes runs one thread per output, which
// reads coalesced across a warp whenever the innermost dim is kept.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/lowp.cuh"
#include "executor/cuda/kernels/reduce.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

template <ReduceOp kOp>
struct R {
  static constexpr bool kExtreme = kOp == ReduceOp::kMax || kOp == ReduceOp::kMin;
  using Acc = std::conditional_t<kExtreme, float, double>;

  __device__ static Acc init() {
    if constexpr (kOp == ReduceOp::kMax) return -INFINITY;
    if constexpr (kOp == ReduceOp::kMin) return INFINITY;
    if constexpr (kOp == ReduceOp::kProd) return 1.0;
    return Acc(0);
  }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (kExtreme) {
      if (isnan(a)) return a;
      if (isnan(b)) return b;
      return kOp == ReduceOp::kMax ? (b > a ? b : a) : (b < a ? b : a);
    } else if constexpr (kOp == ReduceOp::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  __device__ static Acc step(Acc a, float v, double shift) {
    if constexpr (kExtreme || kOp == ReduceOp::kProd) {
      return combine(a, static_cast<Acc>(v));
    } else if constexpr (kOp == ReduceOp::kL1) {
      return a + static_cast<double>(fabsf(v));
    } else if constexpr (kOp == ReduceOp::kL2 || kOp == ReduceOp::kSumSquare) {
      return a + static_cast<double>(v) * static_cast<double>(v);
    } else if constexpr (kOp == ReduceOp::kLogSumExp) {
      return a + exp(static_cast<double>(v) - shift);
    } else {
      return a + static_cast<double>(v);
    }
  }
  __device__ static float finish(Acc a, int64_t count, double shift) {
    if constexpr (kOp == ReduceOp::kMean) return static_cast<float>(a / static_cast<double>(count));
    if constexpr (kOp == ReduceOp::kL2) return static_cast<float>(sqrt(a));
    if constexpr (kOp == ReduceOp::kLogSum) return static_cast<float>(log(a));
    if constexpr (kOp == ReduceOp::kLogSumExp) return static_cast<float>(log(a) + shift);
    return static_cast<float>(a);
  }
};

template <typename Op, typename Acc>
__device__ __forceinline__ Acc warp_combine(Acc a) {
  for (int o = 16; o > 0; o >>= 1) a = Op::combine(a, __shfl_xor_sync(0xffffffffu, a, o));
  return a;
}

// Combines over the block; every thread gets the result.
template <typename Op, typename Acc>
__device__ __forceinline__ Acc block_combine(Acc a, Acc* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  a = warp_combine<Op>(a);
  if (lane == 0) scratch[warp] = a;
  __syncthreads();
  Acc r = lane < warps ? scratch[lane] : Op::init();
  r = warp_combine<Op>(r);
  __syncthreads();
  return r;
}

// The LogSumExp shift: the maximum, or 0 when it is not finite.
__device__ __forceinline__ double lse_shift(float m) {
  return isfinite(m) ? static_cast<double>(m) : 0.0;
}

// One warp per output row of `count` contiguous elements.
template <ReduceOp kOp, typename T>
__global__ void reduce_rows_warp_kernel(const T* x, T* y, int64_t rows, int64_t count) {
  using Op = R<kOp>;
  using MaxOp = R<ReduceOp::kMax>;
  const int lane = threadIdx.x & 31;
  const int64_t warps = blockDim.x >> 5;
  const int64_t step = static_cast<int64_t>(gridDim.x) * warps;
  for (int64_t r = blockIdx.x * warps + (threadIdx.x >> 5); r < rows; r += step) {
    const T* xr = x + r * count;
    double shift = 0.0;
    if constexpr (kOp == ReduceOp::kLogSumExp) {
      float m = MaxOp::init();
      for (int64_t j = lane; j < count; j += 32) m = MaxOp::combine(m, dev::load(xr[j]));
      shift = lse_shift(warp_combine<MaxOp>(m));
    }
    typename Op::Acc a = Op::init();
    for (int64_t j = lane; j < count; j += 32) a = Op::step(a, dev::load(xr[j]), shift);
    a = warp_combine<Op>(a);
    if (lane == 0) y[r] = dev::store<T>(Op::finish(a, count, shift));
  }
}

// One block per output row (rows with many elements).
template <ReduceOp kOp, typename T>
__global__ void reduce_rows_block_kernel(const T* x, T* y, int64_t rows, int64_t count) {
  using Op = R<kOp>;
  using MaxOp = R<ReduceOp::kMax>;
  __shared__ typename Op::Acc scratch[32];
  __shared__ float mscratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * count;
    double shift = 0.0;
    if constexpr (kOp == ReduceOp::kLogSumExp) {
      float m = MaxOp::init();
      for (int64_t j = threadIdx.x; j < count; j += blockDim.x)
        m = MaxOp::combine(m, dev::load(xr[j]));
      shift = lse_shift(block_combine<MaxOp>(m, mscratch));
    }
    typename Op::Acc a = Op::init();
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x)
      a = Op::step(a, dev::load(xr[j]), shift);
    a = block_combine<Op>(a, scratch);
    if (threadIdx.x == 0) y[r] = dev::store<T>(Op::finish(a, count, shift));
  }
}

template <typename I>
__device__ __forceinline__ I decompose(I i, int rank, const int64_t* dims, const int64_t* strides) {
  I off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const I dim = static_cast<I>(dims[d]);
    off += (i % dim) * static_cast<I>(strides[d]);
    i /= dim;
  }
  return off;
}

// One thread per output.
template <ReduceOp kOp, typename I, typename T>
__global__ void reduce_general_kernel(const T* x, T* y, ReducePlan p) {
  using Op = R<kOp>;
  using MaxOp = R<ReduceOp::kMax>;
  const I n_out = static_cast<I>(p.n_out), count = static_cast<I>(p.count);
  const I stride = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I o = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       o < n_out; o += stride) {
    const I base = decompose<I>(o, p.kept_rank, p.kept_dims, p.kept_strides);
    auto at = [&](I k) -> I {
      if (p.red_rank == 1) return base + k * static_cast<I>(p.red_strides[0]);
      return base + decompose<I>(k, p.red_rank, p.red_dims, p.red_strides);
    };
    double shift = 0.0;
    if constexpr (kOp == ReduceOp::kLogSumExp) {
      float m = MaxOp::init();
      for (I k = 0; k < count; ++k) m = MaxOp::combine(m, dev::load(x[at(k)]));
      shift = lse_shift(m);
    }
    typename Op::Acc a = Op::init();
    for (I k = 0; k < count; ++k) a = Op::step(a, dev::load(x[at(k)]), shift);
    y[o] = dev::store<T>(Op::finish(a, p.count, shift));
  }
}

// The innermost kept dim is contiguous and each output reduces many elements: a block of 32 x 16
// threads takes 32 neighbouring outputs (coalesced reads across x), each column split over the 16
// rows of threads and combined in shared memory.
template <ReduceOp kOp, typename T>
__global__ void reduce_cols_kernel(const T* x, T* y, ReducePlan p) {
  using Op = R<kOp>;
  using MaxOp = R<ReduceOp::kMax>;
  using Acc = typename Op::Acc;
  constexpr int kRows = 16;
  __shared__ Acc sm[kRows][33];
  __shared__ float smx[kRows][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * 32 + tx;
  const bool valid = o < p.n_out;
  const int64_t base = valid ? decompose<int64_t>(o, p.kept_rank, p.kept_dims, p.kept_strides) : 0;
  auto at = [&](int64_t k) -> int64_t {
    if (p.red_rank == 1) return base + k * p.red_strides[0];
    return base + decompose<int64_t>(k, p.red_rank, p.red_dims, p.red_strides);
  };
  double shift = 0.0;
  if constexpr (kOp == ReduceOp::kLogSumExp) {
    float m = MaxOp::init();
    if (valid)
      for (int64_t k = ty; k < p.count; k += kRows) m = MaxOp::combine(m, dev::load(x[at(k)]));
    smx[ty][tx] = m;
    __syncthreads();
    float all = MaxOp::init();
    for (int t = 0; t < kRows; ++t) all = MaxOp::combine(all, smx[t][tx]);
    shift = lse_shift(all);
  }
  Acc a = Op::init();
  if (valid)
    for (int64_t k = ty; k < p.count; k += kRows) a = Op::step(a, dev::load(x[at(k)]), shift);
  sm[ty][tx] = a;
  __syncthreads();
  if (ty == 0 && valid) {
    for (int t = 1; t < kRows; ++t) a = Op::combine(a, sm[t][tx]);
    y[o] = dev::store<T>(Op::finish(a, p.count, shift));
  }
}

template <ReduceOp kOp, typename T>
cudaError_t run(const T* x, T* y, const ReducePlan& p, cudaStream_t s) {
  if (p.n_out == 0) return cudaSuccess;
  if (p.rows) {
    if (p.count > 2048 || (p.count > 256 && p.n_out < 1024)) {
      const int64_t g = p.n_out < (int64_t{1} << 20) ? p.n_out : (int64_t{1} << 20);
      reduce_rows_block_kernel<kOp>
          <<<static_cast<unsigned>(g), kThreads, 0, s>>>(x, y, p.n_out, p.count);
    } else {
      constexpr int kWarps = kThreads / 32;
      reduce_rows_warp_kernel<kOp>
          <<<grid_for((p.n_out + kWarps - 1) / kWarps, 1), kThreads, 0, s>>>(x, y, p.n_out,
                                                                             p.count);
    }
    return cudaGetLastError();
  }
  if (p.kept_rank >= 1 && p.kept_strides[p.kept_rank - 1] == 1 && p.count >= 64 &&
      (p.n_out + 31) / 32 < (int64_t{1} << 31)) {
    reduce_cols_kernel<kOp>
        <<<static_cast<unsigned>((p.n_out + 31) / 32), dim3(32, 16), 0, s>>>(x, y, p);
    return cudaGetLastError();
  }
  const int64_t total = p.n_out * (p.count > 0 ? p.count : 1);
  if (total < (int64_t{1} << 31))
    reduce_general_kernel<kOp, int32_t, T><<<grid_for(p.n_out), kThreads, 0, s>>>(x, y, p);
  else
    reduce_general_kernel<kOp, int64_t, T><<<grid_for(p.n_out), kThreads, 0, s>>>(x, y, p);
  return cudaGetLastError();
}

template <bool kMax, typename T>
__global__ void arg_kernel(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner,
                           bool last) {
  const int64_t total = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < total;
       c += stride) {
    const int64_t o = c / inner, i = c % inner;
    const T* s = x + o * n * inner + i;
    float best = s[0];
    int64_t at = 0;
    for (int64_t j = 1; j < n; ++j) {
      const float v = dev::load(s[j * inner]);
      bool takes;
      if (isnan(best))
        takes = last && isnan(v);
      else if (isnan(v))
        takes = true;
      else
        takes = (kMax ? v > best : v < best) || (last && v == best);
      if (takes) {
        best = v;
        at = j;
      }
    }
    y[c] = at;
  }
}

// Whether (v2, i2) beats (v1, i1) for ArgMax (kMax) / ArgMin: the first NaN wins (the last with
// select_last), else the extreme value, ties to the first (last) index; matches the sequential
// scan of the CPU reference in any combination order.
template <bool kMax>
__device__ __forceinline__ bool arg_better(float v1, int64_t i1, float v2, int64_t i2, bool last) {
  if (i1 < 0) return true;
  if (i2 < 0) return false;
  const bool n1 = isnan(v1), n2 = isnan(v2);
  if (n1 || n2) {
    if (n1 && n2) return last ? i2 > i1 : i2 < i1;
    return n2;
  }
  if (v2 != v1) return kMax ? v2 > v1 : v2 < v1;
  return last ? i2 > i1 : i2 < i1;
}

// inner == 1: one block per row.
template <bool kMax, typename T>
__global__ void arg_rows_kernel(const T* x, int64_t* y, int64_t rows, int64_t n, bool last) {
  __shared__ float sv[32];
  __shared__ int64_t si[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    float bv = 0.0f;
    int64_t bi = -1;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float v = dev::load(xr[j]);
      if (arg_better<kMax>(bv, bi, v, j, last)) {
        bv = v;
        bi = j;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (arg_better<kMax>(bv, bi, ov, oi, last)) {
        bv = ov;
        bi = oi;
      }
    }
    if (lane == 0) {
      sv[warp] = bv;
      si[warp] = bi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < warps; ++w)
        if (arg_better<kMax>(bv, bi, sv[w], si[w], last)) {
          bv = sv[w];
          bi = si[w];
        }
      y[r] = bi;
    }
    __syncthreads();
  }
}

}  // namespace

template <typename T>
cudaError_t reduce_typed(ReduceOp op, const T* x, T* y, const ReducePlan& p, cudaStream_t s) {
  switch (op) {
    case ReduceOp::kSum:
      return run<ReduceOp::kSum, T>(x, y, p, s);
    case ReduceOp::kMean:
      return run<ReduceOp::kMean, T>(x, y, p, s);
    case ReduceOp::kMax:
      return run<ReduceOp::kMax, T>(x, y, p, s);
    case ReduceOp::kMin:
      return run<ReduceOp::kMin, T>(x, y, p, s);
    case ReduceOp::kProd:
      return run<ReduceOp::kProd, T>(x, y, p, s);
    case ReduceOp::kL1:
      return run<ReduceOp::kL1, T>(x, y, p, s);
    case ReduceOp::kL2:
      return run<ReduceOp::kL2, T>(x, y, p, s);
    case ReduceOp::kSumSquare:
      return run<ReduceOp::kSumSquare, T>(x, y, p, s);
    case ReduceOp::kLogSum:
      return run<ReduceOp::kLogSum, T>(x, y, p, s);
    case ReduceOp::kLogSumExp:
      return run<ReduceOp::kLogSumExp, T>(x, y, p, s);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_reduce(ReduceOp op, ElemType t, const void* x, void* y, const ReducePlan& p,
                          cudaStream_t s) {
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    return reduce_typed(op, static_cast<const T*>(x), static_cast<T*>(y), p, s);
  });
}

template <typename T>
cudaError_t arg_typed(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner, bool is_max,
                      bool select_last, cudaStream_t s) {
  const int64_t total = outer * inner;
  if (total == 0) return cudaSuccess;
  if (inner == 1 && n >= 256) {
    const unsigned g =
        static_cast<unsigned>(outer < (int64_t{1} << 20) ? outer : (int64_t{1} << 20));
    if (is_max)
      arg_rows_kernel<true><<<g, kThreads, 0, s>>>(x, y, outer, n, select_last);
    else
      arg_rows_kernel<false><<<g, kThreads, 0, s>>>(x, y, outer, n, select_last);
    return cudaGetLastError();
  }
  if (is_max)
    arg_kernel<true><<<grid_for(total), kThreads, 0, s>>>(x, y, outer, n, inner, select_last);
  else
    arg_kernel<false><<<grid_for(total), kThreads, 0, s>>>(x, y, outer, n, inner, select_last);
  return cudaGetLastError();
}

cudaError_t launch_arg_extreme(ElemType t, const void* x, int64_t* y, int64_t outer, int64_t n,
                               int64_t inner, bool is_max, bool select_last, cudaStream_t s) {
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    return arg_typed(static_cast<const T*>(x), y, outer, n, inner, is_max, select_last, s);
  });
}

}  // namespace xopt::cuda
