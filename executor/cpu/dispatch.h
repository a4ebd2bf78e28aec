// Runtime dtype -> C++ type dispatch for kernels.
//
//   return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
//     using T = typename decltype(tag)::type;
//     ...
//   });
#pragma once

#include <cstdint>

#include "common/status.h"
#include "ir/dtype.h"

namespace xopt::exec {

template <typename T>
struct TypeTag {
  using type = T;
};

// float, double, float16 (as ir::Float16: convert with ir::half_to_float/float_to_half),
// int8..int64, uint8..uint64. Returns an unsupported-type error for anything else.
template <typename F>
Status dispatch_numeric(ir::DType t, F&& f) {
  using ir::DType;
  switch (t) {
    case DType::kFloat:
      return f(TypeTag<float>{});
    case DType::kDouble:
      return f(TypeTag<double>{});
    case DType::kFloat16:
      return f(TypeTag<ir::Float16>{});
    case DType::kBFloat16:
      return f(TypeTag<ir::BFloat16>{});
    case DType::kInt8:
      return f(TypeTag<int8_t>{});
    case DType::kInt16:
      return f(TypeTag<int16_t>{});
    case DType::kInt32:
      return f(TypeTag<int32_t>{});
    case DType::kInt64:
      return f(TypeTag<int64_t>{});
    case DType::kUInt8:
      return f(TypeTag<uint8_t>{});
    case DType::kUInt16:
      return f(TypeTag<uint16_t>{});
    case DType::kUInt32:
      return f(TypeTag<uint32_t>{});
    case DType::kUInt64:
      return f(TypeTag<uint64_t>{});
    default:
      return unsupported(std::string("element type ") + std::string(ir::dtype_name(t)) +
                         " is not supported here");
  }
}

// Everything numeric plus bool.
template <typename F>
Status dispatch_all(ir::DType t, F&& f) {
  if (t == ir::DType::kBool) return f(TypeTag<bool>{});
  return dispatch_numeric(t, std::forward<F>(f));
}

// Only float types: float, double, float16, bfloat16.
template <typename F>
Status dispatch_float(ir::DType t, F&& f) {
  using ir::DType;
  switch (t) {
    case DType::kFloat:
      return f(TypeTag<float>{});
    case DType::kDouble:
      return f(TypeTag<double>{});
    case DType::kFloat16:
      return f(TypeTag<ir::Float16>{});
    case DType::kBFloat16:
      return f(TypeTag<ir::BFloat16>{});
    default:
      return unsupported(std::string("element type ") + std::string(ir::dtype_name(t)) +
                         " is not supported here (float types only)");
  }
}

// Load/store through float for half types; identity for the rest.
template <typename T>
inline auto to_compute(T v) {
  if constexpr (std::is_same_v<T, ir::Float16>)
    return ir::half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, ir::BFloat16>)
    return ir::bfloat16_to_float(v.bits);
  else
    return v;
}
template <typename T, typename C>
inline T from_compute(C v) {
  if constexpr (std::is_same_v<T, ir::Float16>)
    return ir::Float16{ir::float_to_half(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, ir::BFloat16>)
    return ir::BFloat16{ir::float_to_bfloat16(static_cast<float>(v))};
  else
    return static_cast<T>(v);
}
// The arithmetic type used for T: float for the half types, T otherwise.
template <typename T>
using compute_t = decltype(to_compute(T{}));

}  // namespace xopt::exec
