// Unary math and activations (see activation.cuh): one grid-stride kernel per op, 4 floats per
// thread through float4 when the pointers are 16-byte aligned.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "executor/cuda/kernels/activation.cuh"
#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/lowp.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

template <UnaryOp kOp>
struct UnaryF {
  UnaryParams p;

  // A Clip bound computed at run time, stored in the element type.
  __device__ __forceinline__ float bound(const void* b) const {
    if (p.bound_type == ElemType::kHalf) return dev::load(*static_cast<const __half*>(b));
    if (p.bound_type == ElemType::kBFloat16)
      return dev::load(*static_cast<const __nv_bfloat16*>(b));
    return *static_cast<const float*>(b);
  }

  template <typename T>
  __device__ __forceinline__ auto operator()(T v) const {
    if constexpr (kOp == UnaryOp::kRelu) {
      return v < T(0) ? T(0) : v;
    } else if constexpr (kOp == UnaryOp::kAbs) {
      if constexpr (std::is_integral_v<T>)
        return v < 0 ? static_cast<T>(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(v)) : v;
      else
        return fabsf(v);
    } else if constexpr (kOp == UnaryOp::kNeg) {
      if constexpr (std::is_integral_v<T>)
        return static_cast<T>(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(v));
      else
        return -v;
    } else if constexpr (kOp == UnaryOp::kSign) {
      return v > T(0) ? T(1) : v < T(0) ? T(-1) : v;
    } else if constexpr (kOp == UnaryOp::kLeakyRelu) {
      return v < 0 ? p.alpha * v : v;
    } else if constexpr (kOp == UnaryOp::kElu) {
      return v < 0 ? p.alpha * expm1f(v) : v;
    } else if constexpr (kOp == UnaryOp::kSelu) {
      return v > 0 ? p.gamma * v : p.gamma * (p.alpha * expf(v) - p.alpha);
    } else if constexpr (kOp == UnaryOp::kCelu) {
      return fmaxf(0.0f, v) + fminf(0.0f, p.alpha * expm1f(v / p.alpha));
    } else if constexpr (kOp == UnaryOp::kThresholdedRelu) {
      return v > p.alpha ? v : 0.0f;
    } else if constexpr (kOp == UnaryOp::kHardSigmoid) {
      return fmaxf(0.0f, fminf(1.0f, p.alpha * v + p.beta));
    } else if constexpr (kOp == UnaryOp::kHardSwish) {
      return v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f));
    } else if constexpr (kOp == UnaryOp::kSoftplus) {
      return v > 0 ? v + log1pf(expf(-v)) : log1pf(expf(v));
    } else if constexpr (kOp == UnaryOp::kSoftsign) {
      return v / (1.0f + fabsf(v));
    } else if constexpr (kOp == UnaryOp::kSigmoid) {
      if (v >= 0) return 1.0f / (1.0f + expf(-v));
      const float e = expf(v);
      return e / (1.0f + e);
    } else if constexpr (kOp == UnaryOp::kTanh) {
      return tanhf(v);
    } else if constexpr (kOp == UnaryOp::kExp) {
      return expf(v);
    } else if constexpr (kOp == UnaryOp::kLog) {
      return logf(v);
    } else if constexpr (kOp == UnaryOp::kSqrt) {
      return sqrtf(v);
    } else if constexpr (kOp == UnaryOp::kReciprocal) {
      return 1.0f / v;
    } else if constexpr (kOp == UnaryOp::kErf) {
      return erff(v);
    } else if constexpr (kOp == UnaryOp::kFloor) {
      return floorf(v);
    } else if constexpr (kOp == UnaryOp::kCeil) {
      return ceilf(v);
    } else if constexpr (kOp == UnaryOp::kRound) {
      return rintf(v);  // half to even
    } else if constexpr (kOp == UnaryOp::kSin) {
      return sinf(v);
    } else if constexpr (kOp == UnaryOp::kCos) {
      return cosf(v);
    } else if constexpr (kOp == UnaryOp::kTan) {
      return tanf(v);
    } else if constexpr (kOp == UnaryOp::kAsin) {
      return asinf(v);
    } else if constexpr (kOp == UnaryOp::kAcos) {
      return acosf(v);
    } else if constexpr (kOp == UnaryOp::kAtan) {
      return atanf(v);
    } else if constexpr (kOp == UnaryOp::kSinh) {
      return sinhf(v);
    } else if constexpr (kOp == UnaryOp::kCosh) {
      return coshf(v);
    } else if constexpr (kOp == UnaryOp::kAsinh) {
      return asinhf(v);
    } else if constexpr (kOp == UnaryOp::kAcosh) {
      return acoshf(v);
    } else if constexpr (kOp == UnaryOp::kAtanh) {
      return atanhf(v);
    } else if constexpr (kOp == UnaryOp::kClip) {
      // min first, then max (numpy.clip); NaN stays NaN.
      if (p.has_lo) {
        const float lo = p.lo_ptr != nullptr ? bound(p.lo_ptr) : p.lo;
        if (v < lo) v = lo;
      }
      if (p.has_hi) {
        const float hi = p.hi_ptr != nullptr ? bound(p.hi_ptr) : p.hi;
        if (v > hi) v = hi;
      }
      return v;
    } else if constexpr (kOp == UnaryOp::kGelu) {
      return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    } else if constexpr (kOp == UnaryOp::kGeluTanh) {
      return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    } else if constexpr (kOp == UnaryOp::kQuickGelu) {
      const float z = p.alpha * v;
      const float s = z >= 0 ? 1.0f / (1.0f + expf(-z)) : expf(z) / (1.0f + expf(z));
      return v * s;
    } else if constexpr (kOp == UnaryOp::kIsNaN) {
      return static_cast<bool>(isnan(v));
    } else if constexpr (kOp == UnaryOp::kIsInf) {
      return static_cast<bool>(isinf(v) && ((v > 0 && p.has_hi) || (v < 0 && p.has_lo)));
    } else {
      static_assert(kOp == UnaryOp::kNot);
      return !v;
    }
  }
};

// A float functor on float16/bfloat16 elements: loaded as float, stored as TO (rounded once).
template <typename F, typename TO>
struct ViaFloat1 {
  F f;
  template <typename T>
  __device__ __forceinline__ TO operator()(T v) const {
    return dev::store<TO>(f(dev::load(v)));
  }
};

template <typename TI, typename TO, typename F>
__global__ void unary_kernel(const TI* x, TO* y, int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = f(x[i]);
}

template <typename F>
__global__ void unary_float4_kernel(const float4* x, float4* y, int64_t n4, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += stride) {
    float4 v = x[i];
    v.x = f(v.x);
    v.y = f(v.y);
    v.z = f(v.z);
    v.w = f(v.w);
    y[i] = v;
  }
}

template <typename T, typename F>
__global__ void bias_unary_kernel(const T* x, const T* b, T* y, int64_t n, int64_t bn, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = dev::store<T>(f(dev::load(x[i]) + dev::load(b[i % bn])));
}

// bias_n % 4 == 0: vector i covers elements 4i..4i+3 of one bias row.
template <typename F>
__global__ void bias_unary_float4_kernel(const float4* x, const float4* b, float4* y, int64_t n4,
                                         int64_t bn4, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += stride) {
    float4 v = x[i];
    const float4 c = b[i % bn4];
    v.x = f(v.x + c.x);
    v.y = f(v.y + c.y);
    v.z = f(v.z + c.z);
    v.w = f(v.w + c.w);
    y[i] = v;
  }
}

template <UnaryOp kOp, typename TI, typename TO>
cudaError_t run(const void* x, void* y, int64_t n, const UnaryParams& prm, cudaStream_t s) {
  const UnaryF<kOp> f{prm};
  const auto* px = static_cast<const TI*>(x);
  auto* py = static_cast<TO*>(y);
  if constexpr (dev::kIsLowp<TI>) {
    unary_kernel<<<grid_for(n), kThreads, 0, s>>>(px, py, n, ViaFloat1<UnaryF<kOp>, TO>{f});
  } else {
    if constexpr (std::is_same_v<TI, float> && std::is_same_v<TO, float>) {
      if (n % 4 == 0 && dev::aligned(px, 16) && dev::aligned(py, 16)) {
        unary_float4_kernel<<<grid_for(n / 4), kThreads, 0, s>>>(
            reinterpret_cast<const float4*>(px), reinterpret_cast<float4*>(py), n / 4, f);
        return cudaGetLastError();
      }
    }
    unary_kernel<<<grid_for(n), kThreads, 0, s>>>(px, py, n, f);
  }
  return cudaGetLastError();
}

template <UnaryOp kOp, typename T>
cudaError_t run_bias_typed(const T* x, const T* b, T* y, int64_t n, int64_t bn,
                           const UnaryParams& prm, cudaStream_t s) {
  bias_unary_kernel<<<grid_for(n), kThreads, 0, s>>>(x, b, y, n, bn, UnaryF<kOp>{prm});
  return cudaGetLastError();
}

template <UnaryOp kOp>
cudaError_t run_bias(ElemType t, const void* xv, const void* bv, void* yv, int64_t n, int64_t bn,
                     const UnaryParams& prm, cudaStream_t s) {
  if (t == ElemType::kHalf)
    return run_bias_typed<kOp>(static_cast<const __half*>(xv), static_cast<const __half*>(bv),
                               static_cast<__half*>(yv), n, bn, prm, s);
  if (t == ElemType::kBFloat16)
    return run_bias_typed<kOp>(static_cast<const __nv_bfloat16*>(xv),
                               static_cast<const __nv_bfloat16*>(bv),
                               static_cast<__nv_bfloat16*>(yv), n, bn, prm, s);
  if (t != ElemType::kFloat) return cudaErrorInvalidValue;
  const auto* x = static_cast<const float*>(xv);
  const auto* b = static_cast<const float*>(bv);
  auto* y = static_cast<float*>(yv);
  const UnaryF<kOp> f{prm};
  if (bn % 4 == 0 && dev::aligned(x, 16) && dev::aligned(b, 16) && dev::aligned(y, 16)) {
    bias_unary_float4_kernel<<<grid_for(n / 4), kThreads, 0, s>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(b),
        reinterpret_cast<float4*>(y), n / 4, bn / 4, f);
  } else {
    bias_unary_kernel<<<grid_for(n), kThreads, 0, s>>>(x, b, y, n, bn, f);
  }
  return cudaGetLastError();
}

// float32, float16, bfloat16, int32, int64 in and out.
template <UnaryOp kOp>
cudaError_t numeric(ElemType t, const void* x, void* y, int64_t n, const UnaryParams& prm,
                    cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return run<kOp, float, float>(x, y, n, prm, s);
    case ElemType::kHalf:
      return run<kOp, __half, __half>(x, y, n, prm, s);
    case ElemType::kBFloat16:
      return run<kOp, __nv_bfloat16, __nv_bfloat16>(x, y, n, prm, s);
    case ElemType::kInt32:
      return run<kOp, int32_t, int32_t>(x, y, n, prm, s);
    case ElemType::kInt64:
      return run<kOp, int64_t, int64_t>(x, y, n, prm, s);
    default:
      return cudaErrorInvalidValue;
  }
}

template <UnaryOp kOp>
cudaError_t floating(ElemType t, const void* x, void* y, int64_t n, const UnaryParams& prm,
                     cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return run<kOp, float, float>(x, y, n, prm, s);
    case ElemType::kHalf:
      return run<kOp, __half, __half>(x, y, n, prm, s);
    case ElemType::kBFloat16:
      return run<kOp, __nv_bfloat16, __nv_bfloat16>(x, y, n, prm, s);
    default:
      return cudaErrorInvalidValue;
  }
}

// float32, float16, bfloat16 -> bool.
template <UnaryOp kOp>
cudaError_t to_bool(ElemType t, const void* x, void* y, int64_t n, const UnaryParams& prm,
                    cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return run<kOp, float, bool>(x, y, n, prm, s);
    case ElemType::kHalf:
      return run<kOp, __half, bool>(x, y, n, prm, s);
    case ElemType::kBFloat16:
      return run<kOp, __nv_bfloat16, bool>(x, y, n, prm, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t launch_unary(UnaryOp op, ElemType t, const void* x, void* y, int64_t n,
                         const UnaryParams& prm, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
#define XOPT_UNARY_NUMERIC(OP) \
  case UnaryOp::OP:            \
    return numeric<UnaryOp::OP>(t, x, y, n, prm, s);
#define XOPT_UNARY_FLOAT(OP) \
  case UnaryOp::OP:          \
    return floating<UnaryOp::OP>(t, x, y, n, prm, s);
  switch (op) {
    XOPT_UNARY_NUMERIC(kRelu)
    XOPT_UNARY_NUMERIC(kAbs)
    XOPT_UNARY_NUMERIC(kNeg)
    XOPT_UNARY_NUMERIC(kSign)
    XOPT_UNARY_FLOAT(kLeakyRelu)
    XOPT_UNARY_FLOAT(kElu)
    XOPT_UNARY_FLOAT(kSelu)
    XOPT_UNARY_FLOAT(kCelu)
    XOPT_UNARY_FLOAT(kThresholdedRelu)
    XOPT_UNARY_FLOAT(kHardSigmoid)
    XOPT_UNARY_FLOAT(kHardSwish)
    XOPT_UNARY_FLOAT(kSoftplus)
    XOPT_UNARY_FLOAT(kSoftsign)
    XOPT_UNARY_FLOAT(kSigmoid)
    XOPT_UNARY_FLOAT(kTanh)
    XOPT_UNARY_FLOAT(kExp)
    XOPT_UNARY_FLOAT(kLog)
    XOPT_UNARY_FLOAT(kSqrt)
    XOPT_UNARY_FLOAT(kReciprocal)
    XOPT_UNARY_FLOAT(kErf)
    XOPT_UNARY_FLOAT(kFloor)
    XOPT_UNARY_FLOAT(kCeil)
    XOPT_UNARY_FLOAT(kRound)
    XOPT_UNARY_FLOAT(kSin)
    XOPT_UNARY_FLOAT(kCos)
    XOPT_UNARY_FLOAT(kTan)
    XOPT_UNARY_FLOAT(kAsin)
    XOPT_UNARY_FLOAT(kAcos)
    XOPT_UNARY_FLOAT(kAtan)
    XOPT_UNARY_FLOAT(kSinh)
    XOPT_UNARY_FLOAT(kCosh)
    XOPT_UNARY_FLOAT(kAsinh)
    XOPT_UNARY_FLOAT(kAcosh)
    XOPT_UNARY_FLOAT(kAtanh)
    XOPT_UNARY_FLOAT(kClip)
    XOPT_UNARY_FLOAT(kGelu)
    XOPT_UNARY_FLOAT(kGeluTanh)
    XOPT_UNARY_FLOAT(kQuickGelu)
    case UnaryOp::kIsNaN:
      return to_bool<UnaryOp::kIsNaN>(t, x, y, n, prm, s);
    case UnaryOp::kIsInf:
      return to_bool<UnaryOp::kIsInf>(t, x, y, n, prm, s);
    case UnaryOp::kNot:
      if (t != ElemType::kBool) return cudaErrorInvalidValue;
      return run<UnaryOp::kNot, bool, bool>(x, y, n, prm, s);
  }
#undef XOPT_UNARY_NUMERIC
#undef XOPT_UNARY_FLOAT
  return cudaErrorInvalidValue;
}

cudaError_t launch_bias_unary(UnaryOp op, ElemType t, const void* x, const void* bias, void* y,
                              int64_t n, int64_t bias_n, const UnaryParams& prm, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (bias_n <= 0 || n % bias_n != 0) return cudaErrorInvalidValue;
  switch (op) {
    case UnaryOp::kGelu:
      return run_bias<UnaryOp::kGelu>(t, x, bias, y, n, bias_n, prm, s);
    case UnaryOp::kGeluTanh:
      return run_bias<UnaryOp::kGeluTanh>(t, x, bias, y, n, bias_n, prm, s);
    case UnaryOp::kQuickGelu:
      return run_bias<UnaryOp::kQuickGelu>(t, x, bias, y, n, bias_n, prm, s);
    case UnaryOp::kRelu:
      return run_bias<UnaryOp::kRelu>(t, x, bias, y, n, bias_n, prm, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace xopt::cuda
