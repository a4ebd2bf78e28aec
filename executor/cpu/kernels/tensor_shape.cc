// Shape, Size, ConstantOfShape, Range: tensors made from shapes and scalars.
#include <cmath>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

// Shape: the input's dims as int64; from 15 the slice [start, end) of them (clamped).
Status shape(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  const auto rank = static_cast<int64_t>(x->rank());
  int64_t start = 0, end = rank;
  if (ctx.opset() >= 15) {
    start = ctx.node().attr_int("start", 0);
    end = ctx.node().attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
  }
  const int64_t n = end > start ? end - start : 0;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, ir::DType::kInt64, {n}));
  auto* p = y->mutable_data<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = x->dims()[static_cast<size_t>(start + i)];
  return Status::ok();
}

Status size(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, ir::DType::kInt64, {}));
  y->mutable_data<int64_t>()[0] = x->numel();
  return Status::ok();
}

// ConstantOfShape: a tensor of `shape` filled with the one element of `value` (default float 0).
Status constant_of_shape(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(auto dims, int_input(ctx, 0, "input"));
  for (int64_t d : dims)
    if (d < 0) return ctx.error("shape " + ir::dims_string(dims) + " has a negative dim");
  ir::Tensor value = ctx.node().attr_tensor("value");
  if (value.empty()) value = ir::Tensor::scalar<float>(0.0f);
  if (value.numel() != 1)
    return ctx.error("attribute 'value' must hold one element, it holds " +
                     std::to_string(value.numel()));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, value.dtype(), dims));
  return dispatch_by_size(value.dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    U* dst = mutable_elems<U>(*y);
    std::fill(dst, dst + y->numel(), elems<U>(value)[0]);
    return Status::ok();
  });
}

// Range: start + i * delta for i < max(ceil((limit - start) / delta), 0). Integer counts are exact;
// float16/bfloat16 compute in float (Range-27's stash_type=1, the only value it defines).
Status range(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* s, required_input(ctx, 0, "start"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* l, required_input(ctx, 1, "limit"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* d, required_input(ctx, 2, "delta"));
  if (s->numel() != 1 || l->numel() != 1 || d->numel() != 1)
    return ctx.error("start, limit and delta must be scalars");
  if (s->dtype() != l->dtype() || s->dtype() != d->dtype())
    return ctx.error("start, limit and delta differ in type");
  return dispatch_numeric(s->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C start = to_compute(s->data<T>()[0]), limit = to_compute(l->data<T>()[0]),
            delta = to_compute(d->data<T>()[0]);
    if (delta == C{0}) return ctx.error("delta is 0");
    int64_t n = 0;
    if constexpr (std::is_integral_v<C>) {
      // Exact ceil((limit - start) / delta) in 128 bits (the difference may overflow 64).
      __int128 diff = static_cast<__int128>(limit) - static_cast<__int128>(start);
      __int128 dl = static_cast<__int128>(delta);
      if ((diff > 0 && dl > 0) || (diff < 0 && dl < 0)) {
        if (dl < 0) diff = -diff, dl = -dl;
        n = static_cast<int64_t>((diff + dl - 1) / dl);
      }
    } else {
      double c = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                           static_cast<double>(delta));
      n = c > 0 ? static_cast<int64_t>(c) : 0;
    }
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, s->dtype(), {n}));
    T* p = y->mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<C>) {
        p[i] = static_cast<T>(start + static_cast<C>(i) * delta);
      } else {
        p[i] = from_compute<T>(start + static_cast<C>(i) * delta);
      }
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Shape", 1, kLatestOpset, shape);
XOPT_CPU_KERNEL("", "Size", 1, kLatestOpset, size);
XOPT_CPU_KERNEL("", "ConstantOfShape", 9, kLatestOpset, constant_of_shape);
XOPT_CPU_KERNEL("", "Range", 11, kLatestOpset, range);

}  // namespace xopt::exec
