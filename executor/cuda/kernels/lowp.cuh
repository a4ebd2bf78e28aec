// Store low, compute high: the element types our kernels keep in memory (float32, float16,
// bfloat16) and their conversions to and from the float every kernel computes in. A kernel
// templated over T loads with dev::load, does its arithmetic (and every accumulation) in float, and
// stores with dev::store<T>, rounding once to nearest even. Device code only (kernels/*.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda::dev {

template <typename T>
inline constexpr bool kIsLowp = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// A value as the type arithmetic is done in: float for the half types, itself otherwise.
template <typename T>
__device__ __forceinline__ auto load(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return v;
}

// A computed value stored as T (round to nearest even for the half types).
template <typename T, typename C>
__device__ __forceinline__ T store(C v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

// Calls f(T{}) with T the C++ type of a float element type (float, __half, __nv_bfloat16);
// cudaErrorInvalidValue for any other.
template <typename F>
cudaError_t dispatch_float(ElemType t, F&& f) {
  switch (t) {
    case ElemType::kFloat:
      return f(float{});
    case ElemType::kHalf:
      return f(__half{});
    case ElemType::kBFloat16:
      return f(__nv_bfloat16{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace xopt::cuda::dev
