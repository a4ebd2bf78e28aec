// Comparisons and logic with numpy broadcasting: Equal, Greater, GreaterOrEqual, Less, LessOrEqual
// (bool results), And, Or, Xor (bool), BitwiseAnd, BitwiseOr, BitwiseXor (integers).
#include <string>

#include "executor/cpu/kernels/elementwise.h"

namespace xopt::exec {
namespace {

using ew::kLastOpset;

Status inputs2(KernelContext& ctx, const ir::Tensor** a, ir::Tensor* b) {
  XOPT_ASSIGN_OR_RETURN(*a, ew::required_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* pb, ew::required_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(auto dims, ew::legacy_broadcast_dims(ctx, (*a)->dims(), pb->dims()));
  *b = dims == pb->dims() ? *pb : pb->reshaped(dims);
  return ew::same_dtype(ctx, {*a, b});
}

// A comparison kernel; `with_bool_and_string` also accepts bool and string inputs (Equal).
template <typename F>
KernelFn compare(F f, bool with_bool_and_string) {
  return [f, with_bool_and_string](KernelContext& ctx) -> Status {
    const ir::Tensor* a;
    ir::Tensor b;
    XOPT_RETURN_IF_ERROR(inputs2(ctx, &a, &b));
    if (a->dtype() == ir::DType::kString) {
      if (!with_bool_and_string) return ctx.unsupported("strings cannot be compared with this op");
      auto dims = broadcast_shapes({a->dims(), b.dims()});
      if (!dims.is_ok()) return ctx.error(dims.status().message());
      XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, ir::DType::kBool, *dims));
      bool* py = y->mutable_data<bool>();
      const auto& sa = a->strings();
      const auto& sb = b.strings();
      for_each_broadcast(*dims, {a->dims(), b.dims()}, [&](int64_t i, const int64_t* off) {
        py[i] = f(sa[static_cast<size_t>(off[0])], sb[static_cast<size_t>(off[1])]);
      });
      return Status::ok();
    }
    if (a->dtype() == ir::DType::kBool && !with_bool_and_string)
      return ctx.unsupported("bool inputs cannot be ordered");
    return dispatch_all(a->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return ew::map_binary<T, T, bool>(ctx, *a, b, ir::DType::kBool, f);
    });
  };
}

// A kernel over bool inputs (logical) or integer inputs (bitwise).
template <typename F>
KernelFn logic(F f, bool bitwise) {
  return [f, bitwise](KernelContext& ctx) -> Status {
    const ir::Tensor* a;
    ir::Tensor b;
    XOPT_RETURN_IF_ERROR(inputs2(ctx, &a, &b));
    if (!bitwise) {
      if (a->dtype() != ir::DType::kBool)
        return ctx.unsupported("takes bool inputs, got " + std::string(ir::dtype_name(a->dtype())));
      return ew::map_binary<bool, bool, bool>(ctx, *a, b, ir::DType::kBool, f);
    }
    return dispatch_numeric(a->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (ew::is_int_v<T>) {
        return ew::map_binary<T, T, T>(ctx, *a, b, a->dtype(),
                                       [&](T x, T y) { return static_cast<T>(f(x, y)); });
      } else {
        return ctx.unsupported("takes integer inputs, got " +
                               std::string(ir::dtype_name(a->dtype())));
      }
    });
  };
}

const auto kEq = [](const auto& x, const auto& y) { return x == y; };
const auto kGt = [](auto x, auto y) { return x > y; };
const auto kGe = [](auto x, auto y) { return x >= y; };
const auto kLt = [](auto x, auto y) { return x < y; };
const auto kLe = [](auto x, auto y) { return x <= y; };

}  // namespace

XOPT_CPU_KERNEL("", "Equal", 1, kLastOpset, compare(kEq, true));
XOPT_CPU_KERNEL("", "Greater", 1, kLastOpset, compare(kGt, false));
XOPT_CPU_KERNEL("", "GreaterOrEqual", 12, kLastOpset, compare(kGe, false));
XOPT_CPU_KERNEL("", "Less", 1, kLastOpset, compare(kLt, false));
XOPT_CPU_KERNEL("", "LessOrEqual", 12, kLastOpset, compare(kLe, false));
XOPT_CPU_KERNEL("", "And", 1, kLastOpset, logic([](auto x, auto y) { return x && y; }, false));
XOPT_CPU_KERNEL("", "Or", 1, kLastOpset, logic([](auto x, auto y) { return x || y; }, false));
XOPT_CPU_KERNEL("", "Xor", 1, kLastOpset, logic([](auto x, auto y) { return x != y; }, false));
XOPT_CPU_KERNEL("", "BitwiseAnd", 18, kLastOpset,
                logic([](auto x, auto y) { return x & y; }, true));
XOPT_CPU_KERNEL("", "BitwiseOr", 18, kLastOpset, logic([](auto x, auto y) { return x | y; }, true));
XOPT_CPU_KERNEL("", "BitwiseXor", 18, kLastOpset,
                logic([](auto x, auto y) { return x ^ y; }, true));

}  // namespace xopt::exec
