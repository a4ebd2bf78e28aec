// Binary arithmetic with numpy broadcasting: Add, Sub, Mul, Div, Mod, Pow (legacy broadcast=1/axis
// attributes before opset 7).
#include <cmath>

#include "executor/cpu/kernels/elementwise.h"

namespace xopt::exec {
namespace {

using ew::kLastOpset;

// Both inputs, B reshaped for legacy broadcasting before opset 7.
Status binary_inputs(KernelContext& ctx, const ir::Tensor** a, ir::Tensor* b) {
  XOPT_ASSIGN_OR_RETURN(*a, ew::required_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* pb, ew::required_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(auto dims, ew::legacy_broadcast_dims(ctx, (*a)->dims(), pb->dims()));
  *b = dims == pb->dims() ? *pb : pb->reshaped(dims);
  return Status::ok();
}

// A kernel for a same-typed numeric binary op f (generic over the compute type).
template <typename F>
KernelFn arith(F f) {
  return [f](KernelContext& ctx) -> Status {
    const ir::Tensor* a;
    ir::Tensor b;
    XOPT_RETURN_IF_ERROR(binary_inputs(ctx, &a, &b));
    XOPT_RETURN_IF_ERROR(ew::same_dtype(ctx, {a, &b}));
    return dispatch_numeric(a->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return ew::map_binary<T, T, T>(ctx, *a, b, a->dtype(), f);
    });
  };
}

const auto kAdd = [](auto a, auto b) { return ew::add(a, b); };
const auto kSub = [](auto a, auto b) { return ew::sub(a, b); };
const auto kMul = [](auto a, auto b) { return ew::mul(a, b); };
const auto kDiv = [](auto a, auto b) { return ew::div(a, b); };

// Mod. fmod = 1: C fmod / '%' (the sign of the dividend). fmod = 0: the sign of the divisor (Python
// '%', floor division; for floats the opset-28 definition, a - floor(a / b) * b). x mod 0 is 0 for
// integers and NaN for floats.
Status mod(KernelContext& ctx) {
  const ir::Tensor* a;
  ir::Tensor b;
  XOPT_RETURN_IF_ERROR(binary_inputs(ctx, &a, &b));
  XOPT_RETURN_IF_ERROR(ew::same_dtype(ctx, {a, &b}));
  const bool fmod = ctx.node().attr_int("fmod", 0) != 0;
  return dispatch_numeric(a->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return ew::map_binary<T, T, T>(ctx, *a, b, a->dtype(), [fmod](auto x, auto y) {
      using C = decltype(x);
      if constexpr (ew::is_int_v<C>) {
        if (y == 0) return C(0);
        if constexpr (std::is_signed_v<C>) {
          if (y == -1) return C(0);  // avoids MIN % -1 overflow
          C r = static_cast<C>(x % y);
          if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
          return r;
        } else {
          return static_cast<C>(x % y);
        }
      } else {
        C r = std::fmod(x, y);
        if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
        if (!fmod && r == 0) r = std::copysign(C(0), y);
        return r;
      }
    });
  });
}

// Integer power by squaring with wrapping; a negative exponent gives the truncated 1 / base^-e.
template <typename C, typename E>
C int_pow(C base, E e) {
  if (e < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<C>)
      if (base == -1) return (e % 2 == 0) ? C(1) : C(-1);
    return 0;
  }
  C r = 1;
  auto ue = static_cast<uint64_t>(e);
  while (ue != 0) {
    if (ue & 1) r = ew::mul(r, base);
    base = ew::mul(base, base);
    ue >>= 1;
  }
  return r;
}

// Pow(X: T, Y: T1) -> T. Floats are computed in double; an integer base with an integer exponent
// exactly (wrapping); an integer base with a float exponent in double, truncated.
Status pow_kernel(KernelContext& ctx) {
  const ir::Tensor* a;
  ir::Tensor b;
  XOPT_RETURN_IF_ERROR(binary_inputs(ctx, &a, &b));
  if (ctx.opset() < 12) XOPT_RETURN_IF_ERROR(ew::same_dtype(ctx, {a, &b}));
  return dispatch_numeric(a->dtype(), [&](auto ta) -> Status {
    using TA = typename decltype(ta)::type;
    return dispatch_numeric(b.dtype(), [&](auto tb) -> Status {
      using TB = typename decltype(tb)::type;
      return ew::map_binary<TA, TB, TA>(ctx, *a, b, a->dtype(), [](auto x, auto y) {
        using CA = decltype(x);
        using CB = decltype(y);
        if constexpr (ew::is_int_v<CA> && ew::is_int_v<CB>) {
          return int_pow(x, y);
        } else {
          return std::pow(static_cast<double>(x), static_cast<double>(y));
        }
      });
    });
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Add", 1, kLastOpset, arith(kAdd));
XOPT_CPU_KERNEL("", "Sub", 1, kLastOpset, arith(kSub));
XOPT_CPU_KERNEL("", "Mul", 1, kLastOpset, arith(kMul));
XOPT_CPU_KERNEL("", "Div", 1, kLastOpset, arith(kDiv));
XOPT_CPU_KERNEL("", "Mod", 10, kLastOpset, mod);
XOPT_CPU_KERNEL("", "Pow", 1, kLastOpset, pow_kernel);

}  // namespace xopt::exec
