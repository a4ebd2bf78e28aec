// Unary math: Abs, Neg, Sign, Ceil, Floor, Round, Sqrt, Reciprocal, Exp, Log, trigonometric and
// hyperbolic functions, Tanh, Erf, Sigmoid, Softsign, Not, BitwiseNot, IsNaN, IsInf.
#include <cmath>

#include "executor/cpu/kernels/elementwise.h"

namespace xopt::exec {
namespace {

using ew::kLastOpset;

// A kernel applying f (a generic lambda over the compute type) to float-typed inputs.
template <typename F>
KernelFn float_unary(F f) {
  return [f](KernelContext& ctx) -> Status {
    XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
    return dispatch_float(x->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return ew::map_unary<T, T>(ctx, *x, x->dtype(), f);
    });
  };
}

// Same for every numeric type; `allow_unsigned` false refuses unsigned integers (Neg, Relu).
template <typename F>
KernelFn numeric_unary(F f, bool allow_unsigned = true) {
  return [f, allow_unsigned](KernelContext& ctx) -> Status {
    XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
    return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (ew::is_int_v<T> && std::is_unsigned_v<T>)
        if (!allow_unsigned)
          return ctx.unsupported(std::string("element type ") +
                                 std::string(ir::dtype_name(x->dtype())) + " is not allowed");
      return ew::map_unary<T, T>(ctx, *x, x->dtype(), f);
    });
  };
}

const auto kAbs = [](auto v) {
  using C = decltype(v);
  if constexpr (ew::is_int_v<C>) {
    if constexpr (std::is_unsigned_v<C>)
      return v;
    else
      return v < 0 ? ew::sub<C>(0, v) : v;  // abs(MIN) wraps to MIN
  } else {
    return std::fabs(v);
  }
};
const auto kNeg = [](auto v) {
  using C = decltype(v);
  if constexpr (ew::is_int_v<C>)
    return ew::sub<C>(0, v);
  else
    return -v;
};
const auto kSign = [](auto v) {
  using C = decltype(v);
  if constexpr (ew::is_int_v<C> && std::is_unsigned_v<C>)
    return static_cast<C>(v > 0 ? 1 : 0);
  else
    return v > 0 ? C(1) : v < 0 ? C(-1) : v;  // 0 -> 0, NaN -> NaN
};
const auto kSigmoid = [](auto v) {
  using C = decltype(v);
  if (v >= 0) return C(1) / (C(1) + std::exp(-v));
  C e = std::exp(v);
  return e / (C(1) + e);
};

Status not_kernel(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  if (x->dtype() != ir::DType::kBool)
    return ctx.unsupported("Not takes bool, got " + std::string(ir::dtype_name(x->dtype())));
  return ew::map_unary<bool, bool>(ctx, *x, ir::DType::kBool, [](bool v) { return !v; });
}

Status bitwise_not(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (ew::is_int_v<T>) {
      return ew::map_unary<T, T>(ctx, *x, x->dtype(), [](T v) { return static_cast<T>(~v); });
    } else {
      return ctx.unsupported("BitwiseNot takes integers, got " +
                             std::string(ir::dtype_name(x->dtype())));
    }
  });
}

Status is_nan(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  return dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return ew::map_unary<T, bool>(ctx, *x, ir::DType::kBool, [](auto v) { return std::isnan(v); });
  });
}

Status is_inf(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  const bool neg = ctx.node().attr_int("detect_negative", 1) != 0;
  const bool pos = ctx.node().attr_int("detect_positive", 1) != 0;
  return dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return ew::map_unary<T, bool>(ctx, *x, ir::DType::kBool, [&](auto v) {
      return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
    });
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Abs", 1, kLastOpset, numeric_unary(kAbs));
XOPT_CPU_KERNEL("", "Neg", 1, kLastOpset, numeric_unary(kNeg, /*allow_unsigned=*/false));
XOPT_CPU_KERNEL("", "Sign", 9, kLastOpset, numeric_unary(kSign));
XOPT_CPU_KERNEL("", "Ceil", 1, kLastOpset, float_unary([](auto v) { return std::ceil(v); }));
XOPT_CPU_KERNEL("", "Floor", 1, kLastOpset, float_unary([](auto v) { return std::floor(v); }));
// Half to even: nearbyint in the default rounding mode.
XOPT_CPU_KERNEL("", "Round", 11, kLastOpset, float_unary([](auto v) { return std::nearbyint(v); }));
XOPT_CPU_KERNEL("", "Sqrt", 1, kLastOpset, float_unary([](auto v) { return std::sqrt(v); }));
XOPT_CPU_KERNEL("", "Reciprocal", 1, kLastOpset,
                float_unary([](auto v) { return decltype(v)(1) / v; }));
XOPT_CPU_KERNEL("", "Exp", 1, kLastOpset, float_unary([](auto v) { return std::exp(v); }));
XOPT_CPU_KERNEL("", "Log", 1, kLastOpset, float_unary([](auto v) { return std::log(v); }));
XOPT_CPU_KERNEL("", "Sin", 7, kLastOpset, float_unary([](auto v) { return std::sin(v); }));
XOPT_CPU_KERNEL("", "Cos", 7, kLastOpset, float_unary([](auto v) { return std::cos(v); }));
XOPT_CPU_KERNEL("", "Tan", 7, kLastOpset, float_unary([](auto v) { return std::tan(v); }));
XOPT_CPU_KERNEL("", "Asin", 7, kLastOpset, float_unary([](auto v) { return std::asin(v); }));
XOPT_CPU_KERNEL("", "Acos", 7, kLastOpset, float_unary([](auto v) { return std::acos(v); }));
XOPT_CPU_KERNEL("", "Atan", 7, kLastOpset, float_unary([](auto v) { return std::atan(v); }));
XOPT_CPU_KERNEL("", "Sinh", 9, kLastOpset, float_unary([](auto v) { return std::sinh(v); }));
XOPT_CPU_KERNEL("", "Cosh", 9, kLastOpset, float_unary([](auto v) { return std::cosh(v); }));
XOPT_CPU_KERNEL("", "Asinh", 9, kLastOpset, float_unary([](auto v) { return std::asinh(v); }));
XOPT_CPU_KERNEL("", "Acosh", 9, kLastOpset, float_unary([](auto v) { return std::acosh(v); }));
XOPT_CPU_KERNEL("", "Atanh", 9, kLastOpset, float_unary([](auto v) { return std::atanh(v); }));
XOPT_CPU_KERNEL("", "Tanh", 1, kLastOpset, float_unary([](auto v) { return std::tanh(v); }));
XOPT_CPU_KERNEL("", "Erf", 9, kLastOpset, float_unary([](auto v) { return std::erf(v); }));
XOPT_CPU_KERNEL("", "Sigmoid", 1, kLastOpset, float_unary(kSigmoid));
XOPT_CPU_KERNEL("", "Softsign", 1, kLastOpset,
                float_unary([](auto v) { return v / (decltype(v)(1) + std::fabs(v)); }));
XOPT_CPU_KERNEL("", "Not", 1, kLastOpset, not_kernel);
XOPT_CPU_KERNEL("", "BitwiseNot", 18, kLastOpset, bitwise_not);
XOPT_CPU_KERNEL("", "IsNaN", 9, kLastOpset, is_nan);
XOPT_CPU_KERNEL("", "IsInf", 10, kLastOpset, is_inf);

}  // namespace xopt::exec
