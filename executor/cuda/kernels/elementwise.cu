// Broadcast elementwise kernels (see elementwise.cuh). Every kernel is a grid-stride loop; the
// same-shape case runs 4 elements per thread through 16-byte (or 4-byte for bool) vector accesses
// when the pointers allow it, a scalar operand is read once per thread, and everything else walks
// the IndexPlan with 32-bit index math where the offsets fit.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/elementwise.cuh"
#include "executor/cuda/kernels/lowp.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
using wrap_t = std::make_unsigned_t<T>;

// ---- binary functors (compute types = storage types; see executor/cpu/kernels/elementwise.h) ----

struct AddF {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsInt<T>)
      return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
    else
      return a + b;
  }
};
struct SubF {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsInt<T>)
      return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
    else
      return a - b;
  }
};
struct MulF {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsInt<T>)
      return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
    else
      return a * b;
  }
};
// Integer division truncates; x / 0 is 0 and MIN / -1 wraps to MIN.
struct DivF {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) {
      if (b == 0) return 0;
      if (b == -1) return static_cast<T>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a));
      return static_cast<T>(a / b);
    } else {
      return a / b;
    }
  }
};
template <bool kFmod>
struct ModF {
  template <typename T>
  __device__ T operator()(T x, T y) const {
    if constexpr (kIsInt<T>) {
      if (y == 0 || y == -1) return 0;
      T r = static_cast<T>(x % y);
      if (!kFmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
      return r;
    } else {
      T r = fmodf(x, y);
      if (!kFmod && r != 0 && ((r < 0) != (y < 0))) r += y;
      if (!kFmod && r == 0) r = copysignf(0.0f, y);
      return r;
    }
  }
};
// Pow in double, rounded once (the CPU reference computes std::pow(double, double)).
struct PowF {
  template <typename B>
  __device__ float operator()(float a, B b) const {
    const double e = static_cast<double>(b);
    if (e == 2.0) return a * a;
    if (e == 1.0) return a;
    return static_cast<float>(pow(static_cast<double>(a), e));
  }
};
struct PReluF {
  __device__ float operator()(float v, float s) const { return v < 0 ? s * v : v; }
};
struct EqF {
  template <typename T>
  __device__ bool operator()(T a, T b) const {
    return a == b;
  }
};
struct LtF {
  template <typename T>
  __device__ bool operator()(T a, T b) const {
    return a < b;
  }
};
struct GtF {
  template <typename T>
  __device__ bool operator()(T a, T b) const {
    return a > b;
  }
};
struct LeF {
  template <typename T>
  __device__ bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GeF {
  template <typename T>
  __device__ bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct AndF {
  __device__ bool operator()(bool a, bool b) const { return a && b; }
};
struct OrF {
  __device__ bool operator()(bool a, bool b) const { return a || b; }
};
struct XorF {
  __device__ bool operator()(bool a, bool b) const { return a != b; }
};

// A float functor on float16/bfloat16 operands: both loaded as float, the result stored as TO
// (rounded once; bool for comparisons). Integer operands (Pow's exponent) pass through.
template <typename F, typename TO>
struct ViaFloat {
  F f;
  template <typename A, typename B>
  __device__ TO operator()(A a, B b) const {
    return dev::store<TO>(f(dev::load(a), dev::load(b)));
  }
};

// ---- binary kernels ----

template <typename T>
struct alignas(sizeof(T) * 4) Vec4 {
  T v[4];
};

template <typename TA, typename TB, typename TO, typename F>
__global__ void binary_same_kernel(const TA* a, const TB* b, TO* y, int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = f(a[i], b[i]);
}

// 4 elements per thread; all three pointers aligned to their Vec4, n4 = n / 4 vectors.
template <typename TA, typename TB, typename TO, typename F>
__global__ void binary_same_vec_kernel(const Vec4<TA>* a, const Vec4<TB>* b, Vec4<TO>* y,
                                       int64_t n4, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += stride) {
    const Vec4<TA> va = a[i];
    const Vec4<TB> vb = b[i];
    Vec4<TO> vy;
#pragma unroll
    for (int k = 0; k < 4; ++k) vy.v[k] = f(va.v[k], vb.v[k]);
    y[i] = vy;
  }
}

// One operand is a single element (kScalarA: a; else b).
template <bool kScalarA, typename TA, typename TB, typename TO, typename F>
__global__ void binary_scalar_kernel(const TA* a, const TB* b, TO* y, int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  if constexpr (kScalarA) {
    const TA av = a[0];
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += stride)
      y[i] = f(av, b[i]);
  } else {
    const TB bv = b[0];
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += stride)
      y[i] = f(a[i], bv);
  }
}

// a contiguous, b one row of `cols` elements repeated (bias-style broadcast).
template <typename TA, typename TB, typename TO, typename F>
__global__ void binary_row_kernel(const TA* a, const TB* b, TO* y, int64_t n, int64_t cols, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = f(a[i], b[i % cols]);
}

// The innermost merged dim is a multiple of 4 and each operand is contiguous (kAVec / kBVec) or
// constant along it: 4 outputs per thread, the offsets decomposed once per vector (bias rows,
// per-channel scales on NCHW, residuals broadcast over a batch).
template <bool kAVec, bool kBVec, typename TA, typename TB, typename TO, typename F>
__global__ void binary_inner_vec_kernel(const TA* a, const TB* b, Vec4<TO>* y, IndexPlan p, F f) {
  const int32_t n4 = static_cast<int32_t>(p.numel / 4);
  const int32_t stride = static_cast<int32_t>(gridDim.x * blockDim.x);
  for (int32_t v = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x); v < n4;
       v += stride) {
    int32_t off[2];
    dev::plan_offsets<2>(p, v * 4, off);
    Vec4<TA> va;
    Vec4<TB> vb;
    if constexpr (kAVec) {
      va = *reinterpret_cast<const Vec4<TA>*>(a + off[0]);
    } else {
      const TA s = a[off[0]];
#pragma unroll
      for (int k = 0; k < 4; ++k) va.v[k] = s;
    }
    if constexpr (kBVec) {
      vb = *reinterpret_cast<const Vec4<TB>*>(b + off[1]);
    } else {
      const TB s = b[off[1]];
#pragma unroll
      for (int k = 0; k < 4; ++k) vb.v[k] = s;
    }
    Vec4<TO> vy;
#pragma unroll
    for (int k = 0; k < 4; ++k) vy.v[k] = f(va.v[k], vb.v[k]);
    y[v] = vy;
  }
}

// Whether operand k of p can be read 4 innermost elements at a time from `ptr`: contiguous along
// the innermost dim with every other stride a multiple of 4 and `ptr` aligned, or constant along
// it.
template <typename T>
bool inner_vec_ok(const IndexPlan& p, int k, const T* ptr, bool* contiguous) {
  const int L = p.rank - 1;
  *contiguous = p.strides[k][L] == 1;
  if (p.strides[k][L] == 0) return true;
  if (!*contiguous || !dev::aligned(ptr, sizeof(Vec4<T>))) return false;
  for (int d = 0; d < L; ++d)
    if (p.strides[k][d] % 4 != 0) return false;
  return true;
}

template <typename I, typename TA, typename TB, typename TO, typename F>
__global__ void binary_general_kernel(const TA* a, const TB* b, TO* y, IndexPlan p, F f) {
  const I n = static_cast<I>(p.numel);
  const I stride = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       i < n; i += stride) {
    I off[2];
    dev::plan_offsets<2>(p, i, off);
    y[i] = f(a[off[0]], b[off[1]]);
  }
}

// Launches binary_inner_vec_kernel when the plan allows it; false otherwise.
template <typename TA, typename TB, typename TO, typename F>
bool run_inner_vec(const TA* a, const TB* b, TO* y, const IndexPlan& p, F f, cudaStream_t s) {
  constexpr bool kSmall = sizeof(TA) <= 4 && sizeof(TB) <= 4 && sizeof(TO) <= 4;
  if constexpr (!kSmall) {
    return false;
  } else {
    if (p.rank < 2 || p.dims[p.rank - 1] % 4 != 0 || !dev::fits_int32(p) ||
        !dev::aligned(y, sizeof(Vec4<TO>)))
      return false;
    bool ca = false, cb = false;
    if (!inner_vec_ok(p, 0, a, &ca) || !inner_vec_ok(p, 1, b, &cb) || (!ca && !cb)) return false;
    auto* vy = reinterpret_cast<Vec4<TO>*>(y);
    const unsigned g = grid_for(p.numel / 4);
    if (ca && cb)
      binary_inner_vec_kernel<true, true><<<g, kThreads, 0, s>>>(a, b, vy, p, f);
    else if (ca)
      binary_inner_vec_kernel<true, false><<<g, kThreads, 0, s>>>(a, b, vy, p, f);
    else
      binary_inner_vec_kernel<false, true><<<g, kThreads, 0, s>>>(a, b, vy, p, f);
    return true;
  }
}

template <typename TA, typename TB, typename TO, typename F>
cudaError_t run_binary(const void* pa, const void* pb, void* py, const IndexPlan& p, F f,
                       cudaStream_t s) {
  const auto* a = static_cast<const TA*>(pa);
  const auto* b = static_cast<const TB*>(pb);
  auto* y = static_cast<TO*>(py);
  const int64_t n = p.numel;
  if (n == 0) return cudaSuccess;
  const bool rank1 = p.rank == 1;
  const int64_t sa = p.strides[0][p.rank - 1], sb = p.strides[1][p.rank - 1];
  if (rank1 && sa == 1 && sb == 1) {
    constexpr bool kSmall = sizeof(TA) <= 4 && sizeof(TB) <= 4 && sizeof(TO) <= 4;
    if constexpr (kSmall) {
      if (n % 4 == 0 && dev::aligned(a, sizeof(Vec4<TA>)) && dev::aligned(b, sizeof(Vec4<TB>)) &&
          dev::aligned(y, sizeof(Vec4<TO>))) {
        binary_same_vec_kernel<<<grid_for(n / 4), kThreads, 0, s>>>(
            reinterpret_cast<const Vec4<TA>*>(a), reinterpret_cast<const Vec4<TB>*>(b),
            reinterpret_cast<Vec4<TO>*>(y), n / 4, f);
        return cudaGetLastError();
      }
    }
    binary_same_kernel<<<grid_for(n), kThreads, 0, s>>>(a, b, y, n, f);
  } else if (rank1 && sa == 0 && sb == 1) {
    binary_scalar_kernel<true><<<grid_for(n), kThreads, 0, s>>>(a, b, y, n, f);
  } else if (rank1 && sa == 1 && sb == 0) {
    binary_scalar_kernel<false><<<grid_for(n), kThreads, 0, s>>>(a, b, y, n, f);
  } else if (run_inner_vec(a, b, y, p, f, s)) {
    // launched
  } else if (p.rank == 2 && p.strides[0][0] == p.dims[1] && p.strides[0][1] == 1 &&
             p.strides[1][0] == 0 && p.strides[1][1] == 1) {
    binary_row_kernel<<<grid_for(n), kThreads, 0, s>>>(a, b, y, n, p.dims[1], f);
  } else if (dev::fits_int32(p)) {
    binary_general_kernel<int32_t><<<grid_for(n), kThreads, 0, s>>>(a, b, y, p, f);
  } else {
    binary_general_kernel<int64_t><<<grid_for(n), kThreads, 0, s>>>(a, b, y, p, f);
  }
  return cudaGetLastError();
}

// Same-typed numeric op over float/float16/bfloat16/int32/int64 (the half types in float).
template <typename F>
cudaError_t numeric_same(ElemType t, const void* a, const void* b, void* y, const IndexPlan& p, F f,
                         cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return run_binary<float, float, float>(a, b, y, p, f, s);
    case ElemType::kHalf:
      return run_binary<__half, __half, __half>(a, b, y, p, ViaFloat<F, __half>{f}, s);
    case ElemType::kBFloat16:
      return run_binary<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16>(
          a, b, y, p, ViaFloat<F, __nv_bfloat16>{f}, s);
    case ElemType::kInt32:
      return run_binary<int32_t, int32_t, int32_t>(a, b, y, p, f, s);
    case ElemType::kInt64:
      return run_binary<int64_t, int64_t, int64_t>(a, b, y, p, f, s);
    default:
      return cudaErrorInvalidValue;
  }
}

template <typename F>
cudaError_t compare(ElemType t, const void* a, const void* b, void* y, const IndexPlan& p, F f,
                    cudaStream_t s, bool with_bool) {
  switch (t) {
    case ElemType::kFloat:
      return run_binary<float, float, bool>(a, b, y, p, f, s);
    case ElemType::kHalf:
      return run_binary<__half, __half, bool>(a, b, y, p, ViaFloat<F, bool>{f}, s);
    case ElemType::kBFloat16:
      return run_binary<__nv_bfloat16, __nv_bfloat16, bool>(a, b, y, p, ViaFloat<F, bool>{f}, s);
    case ElemType::kInt32:
      return run_binary<int32_t, int32_t, bool>(a, b, y, p, f, s);
    case ElemType::kInt64:
      return run_binary<int64_t, int64_t, bool>(a, b, y, p, f, s);
    case ElemType::kBool:
      if (with_bool) return run_binary<bool, bool, bool>(a, b, y, p, EqF{}, s);
      return cudaErrorInvalidValue;
    default:
      return cudaErrorInvalidValue;
  }
}

// ---- variadic ----

template <VariadicOp kOp, typename T>
__device__ __forceinline__ T fold_step(T acc, T v) {
  if constexpr (kOp == VariadicOp::kSum || kOp == VariadicOp::kMean) {
    return AddF{}(acc, v);
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      if (isnan(acc)) return acc;
      if (isnan(v)) return v;
    }
    return (kOp == VariadicOp::kMax ? v > acc : v < acc) ? v : acc;
  }
}

template <VariadicOp kOp, typename T, typename I>
__global__ void variadic_kernel(VariadicArgs in, T* y, IndexPlan p) {
  const I n = static_cast<I>(p.numel);
  const I stride = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  const int k_in = p.operands;
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       i < n; i += stride) {
    // Offsets of every input, decomposed once.
    I off[kMaxOperands];
#pragma unroll
    for (int k = 0; k < kMaxOperands; ++k) off[k] = 0;
    I r = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(p.dims[d]);
      const I c = r % dim;
      r /= dim;
#pragma unroll
      for (int k = 0; k < kMaxOperands; ++k)
        if (k < k_in) off[k] += c * static_cast<I>(p.strides[k][d]);
    }
    // float16/bfloat16 fold in float and round once.
    using C = decltype(dev::load(T{}));
    C acc = dev::load(static_cast<const T*>(in.in[0])[off[0]]);
#pragma unroll
    for (int k = 1; k < kMaxOperands; ++k)
      if (k < k_in) acc = fold_step<kOp>(acc, dev::load(static_cast<const T*>(in.in[k])[off[k]]));
    if constexpr (kOp == VariadicOp::kMean) acc = acc / static_cast<C>(k_in);
    y[i] = dev::store<T>(acc);
  }
}

template <VariadicOp kOp, typename T>
cudaError_t run_variadic(const VariadicArgs& in, void* y, const IndexPlan& p, cudaStream_t s) {
  if (p.numel == 0) return cudaSuccess;
  if (dev::fits_int32(p))
    variadic_kernel<kOp, T, int32_t>
        <<<grid_for(p.numel), kThreads, 0, s>>>(in, static_cast<T*>(y), p);
  else
    variadic_kernel<kOp, T, int64_t>
        <<<grid_for(p.numel), kThreads, 0, s>>>(in, static_cast<T*>(y), p);
  return cudaGetLastError();
}

template <VariadicOp kOp>
cudaError_t variadic_typed(ElemType t, const VariadicArgs& in, void* y, const IndexPlan& p,
                           cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return run_variadic<kOp, float>(in, y, p, s);
    case ElemType::kHalf:
      return run_variadic<kOp, __half>(in, y, p, s);
    case ElemType::kBFloat16:
      return run_variadic<kOp, __nv_bfloat16>(in, y, p, s);
    case ElemType::kInt32:
      if constexpr (kOp != VariadicOp::kMean) return run_variadic<kOp, int32_t>(in, y, p, s);
      return cudaErrorInvalidValue;
    case ElemType::kInt64:
      if constexpr (kOp != VariadicOp::kMean) return run_variadic<kOp, int64_t>(in, y, p, s);
      return cudaErrorInvalidValue;
    default:
      return cudaErrorInvalidValue;
  }
}

// ---- where ----

template <typename U, typename I>
__global__ void where_kernel(const bool* c, const U* x, const U* y, U* out, IndexPlan p) {
  const I n = static_cast<I>(p.numel);
  const I stride = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       i < n; i += stride) {
    I off[3];
    dev::plan_offsets<3>(p, i, off);
    out[i] = c[off[0]] ? x[off[1]] : y[off[2]];
  }
}

template <typename U>
cudaError_t run_where(const bool* c, const void* x, const void* y, void* out, const IndexPlan& p,
                      cudaStream_t s) {
  if (p.numel == 0) return cudaSuccess;
  const auto* px = static_cast<const U*>(x);
  const auto* py = static_cast<const U*>(y);
  auto* po = static_cast<U*>(out);
  if (dev::fits_int32(p))
    where_kernel<U, int32_t><<<grid_for(p.numel), kThreads, 0, s>>>(c, px, py, po, p);
  else
    where_kernel<U, int64_t><<<grid_for(p.numel), kThreads, 0, s>>>(c, px, py, po, p);
  return cudaGetLastError();
}

// ---- cast ----

// Value of one element as the compute type: float for float16 and bfloat16.
template <typename T>
__device__ __forceinline__ auto load_compute(T v) {
  return dev::load(v);
}

template <typename To, typename From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsInt<To> && std::is_floating_point_v<From>) {
    if (isnan(v)) return 0;
    int64_t i;
    const double d = static_cast<double>(v);
    if (d >= 9223372036854775807.0)
      i = INT64_MAX;
    else if (d <= -9223372036854775808.0)
      i = INT64_MIN;
    else
      i = static_cast<int64_t>(v);
    return static_cast<To>(i);  // wraps for int32
  } else {
    return static_cast<To>(v);
  }
}

template <typename TI, typename TO>
__global__ void cast_kernel(const TI* x, TO* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const auto v = load_compute(x[i]);
    using C = decltype(v);
    if constexpr (dev::kIsLowp<TO>) {
      y[i] = dev::store<TO>(convert<float, C>(v));
    } else {
      y[i] = convert<TO, C>(v);
    }
  }
}

template <typename TI>
cudaError_t cast_from(ElemType to, const void* x, void* y, int64_t n, cudaStream_t s) {
  const auto* px = static_cast<const TI*>(x);
  const unsigned g = grid_for(n);
  switch (to) {
    case ElemType::kFloat:
      cast_kernel<<<g, kThreads, 0, s>>>(px, static_cast<float*>(y), n);
      break;
    case ElemType::kInt32:
      cast_kernel<<<g, kThreads, 0, s>>>(px, static_cast<int32_t*>(y), n);
      break;
    case ElemType::kInt64:
      cast_kernel<<<g, kThreads, 0, s>>>(px, static_cast<int64_t*>(y), n);
      break;
    case ElemType::kBool:
      cast_kernel<<<g, kThreads, 0, s>>>(px, static_cast<bool*>(y), n);
      break;
    case ElemType::kHalf:
      cast_kernel<<<g, kThreads, 0, s>>>(px, static_cast<__half*>(y), n);
      break;
    case ElemType::kBFloat16:
      cast_kernel<<<g, kThreads, 0, s>>>(px, static_cast<__nv_bfloat16*>(y), n);
      break;
  }
  return cudaGetLastError();
}

// Pow with a float16/bfloat16 base: the exponent the base's type, float, int32 or int64.
template <typename T>
cudaError_t pow_lowp(ElemType b_type, const void* a, const void* b, void* y, const IndexPlan& p,
                     cudaStream_t s) {
  const ViaFloat<PowF, T> f{};
  switch (b_type) {
    case ElemType::kHalf:
      return run_binary<T, __half, T>(a, b, y, p, f, s);
    case ElemType::kBFloat16:
      return run_binary<T, __nv_bfloat16, T>(a, b, y, p, f, s);
    case ElemType::kFloat:
      return run_binary<T, float, T>(a, b, y, p, f, s);
    case ElemType::kInt32:
      return run_binary<T, int32_t, T>(a, b, y, p, f, s);
    case ElemType::kInt64:
      return run_binary<T, int64_t, T>(a, b, y, p, f, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t launch_binary(BinaryOp op, ElemType a_type, ElemType b_type, const void* a,
                          const void* b, void* y, const IndexPlan& p, cudaStream_t s) {
  if (op != BinaryOp::kPow && a_type != b_type) return cudaErrorInvalidValue;
  switch (op) {
    case BinaryOp::kAdd:
      return numeric_same(a_type, a, b, y, p, AddF{}, s);
    case BinaryOp::kSub:
      return numeric_same(a_type, a, b, y, p, SubF{}, s);
    case BinaryOp::kMul:
      return numeric_same(a_type, a, b, y, p, MulF{}, s);
    case BinaryOp::kDiv:
      return numeric_same(a_type, a, b, y, p, DivF{}, s);
    case BinaryOp::kMod:
      return numeric_same(a_type, a, b, y, p, ModF<false>{}, s);
    case BinaryOp::kFMod:
      return numeric_same(a_type, a, b, y, p, ModF<true>{}, s);
    case BinaryOp::kPow:
      if (a_type == ElemType::kHalf) return pow_lowp<__half>(b_type, a, b, y, p, s);
      if (a_type == ElemType::kBFloat16) return pow_lowp<__nv_bfloat16>(b_type, a, b, y, p, s);
      if (a_type != ElemType::kFloat) return cudaErrorInvalidValue;
      switch (b_type) {
        case ElemType::kFloat:
          return run_binary<float, float, float>(a, b, y, p, PowF{}, s);
        case ElemType::kInt32:
          return run_binary<float, int32_t, float>(a, b, y, p, PowF{}, s);
        case ElemType::kInt64:
          return run_binary<float, int64_t, float>(a, b, y, p, PowF{}, s);
        default:
          return cudaErrorInvalidValue;
      }
    case BinaryOp::kPRelu:
      if (a_type == ElemType::kFloat)
        return run_binary<float, float, float>(a, b, y, p, PReluF{}, s);
      if (a_type == ElemType::kHalf)
        return run_binary<__half, __half, __half>(a, b, y, p, ViaFloat<PReluF, __half>{}, s);
      if (a_type == ElemType::kBFloat16)
        return run_binary<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16>(
            a, b, y, p, ViaFloat<PReluF, __nv_bfloat16>{}, s);
      return cudaErrorInvalidValue;
    case BinaryOp::kEqual:
      return compare(a_type, a, b, y, p, EqF{}, s, true);
    case BinaryOp::kLess:
      return compare(a_type, a, b, y, p, LtF{}, s, false);
    case BinaryOp::kGreater:
      return compare(a_type, a, b, y, p, GtF{}, s, false);
    case BinaryOp::kLessOrEqual:
      return compare(a_type, a, b, y, p, LeF{}, s, false);
    case BinaryOp::kGreaterOrEqual:
      return compare(a_type, a, b, y, p, GeF{}, s, false);
    case BinaryOp::kAnd:
      if (a_type != ElemType::kBool) return cudaErrorInvalidValue;
      return run_binary<bool, bool, bool>(a, b, y, p, AndF{}, s);
    case BinaryOp::kOr:
      if (a_type != ElemType::kBool) return cudaErrorInvalidValue;
      return run_binary<bool, bool, bool>(a, b, y, p, OrF{}, s);
    case BinaryOp::kXor:
      if (a_type != ElemType::kBool) return cudaErrorInvalidValue;
      return run_binary<bool, bool, bool>(a, b, y, p, XorF{}, s);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_variadic(VariadicOp op, ElemType type, const VariadicArgs& in, void* y,
                            const IndexPlan& p, cudaStream_t s) {
  switch (op) {
    case VariadicOp::kMax:
      return variadic_typed<VariadicOp::kMax>(type, in, y, p, s);
    case VariadicOp::kMin:
      return variadic_typed<VariadicOp::kMin>(type, in, y, p, s);
    case VariadicOp::kSum:
      return variadic_typed<VariadicOp::kSum>(type, in, y, p, s);
    case VariadicOp::kMean:
      return variadic_typed<VariadicOp::kMean>(type, in, y, p, s);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_where(const bool* cond, const void* x, const void* y, void* out,
                         size_t elem_size, const IndexPlan& p, cudaStream_t s) {
  switch (elem_size) {
    case 1:
      return run_where<uint8_t>(cond, x, y, out, p, s);
    case 2:
      return run_where<uint16_t>(cond, x, y, out, p, s);
    case 4:
      return run_where<uint32_t>(cond, x, y, out, p, s);
    case 8:
      return run_where<uint64_t>(cond, x, y, out, p, s);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_cast(ElemType from, ElemType to, const void* x, void* y, int64_t n,
                        cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  switch (from) {
    case ElemType::kFloat:
      return cast_from<float>(to, x, y, n, s);
    case ElemType::kInt32:
      return cast_from<int32_t>(to, x, y, n, s);
    case ElemType::kInt64:
      return cast_from<int64_t>(to, x, y, n, s);
    case ElemType::kBool:
      return cast_from<bool>(to, x, y, n, s);
    case ElemType::kHalf:
      return cast_from<__half>(to, x, y, n, s);
    case ElemType::kBFloat16:
      return cast_from<__nv_bfloat16>(to, x, y, n, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace xopt::cuda
