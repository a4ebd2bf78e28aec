// Variadic elementwise ops with numpy broadcasting over all inputs: Max, Min (NaN propagates),
// Sum, Mean; and Where(condition, X, Y).
#include <cmath>

#include "executor/cpu/kernels/elementwise.h"

namespace xopt::exec {
namespace {

using ew::kLastOpset;

enum class Fold { kMax, kMin, kSum, kMean };

template <Fold kOp>
Status variadic(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(auto ins, ew::present_inputs(ctx, 1));
  XOPT_RETURN_IF_ERROR(ew::same_dtype(ctx, ins));
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::Tensor* t : ins) shapes.push_back(t->dims());
  auto dims = broadcast_shapes(shapes);
  if (!dims.is_ok()) return ctx.error(dims.status().message());
  return dispatch_numeric(ins[0]->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr ((kOp == Fold::kSum || kOp == Fold::kMean) && !ew::is_float_v<T>) {
      // The spec allows float types only; integers are summed with wrapping all the same.
      if (kOp == Fold::kMean) return ctx.unsupported("Mean takes float types only");
    }
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, ins[0]->dtype(), *dims));
    std::vector<const T*> p;
    for (const ir::Tensor* t : ins) p.push_back(t->data<T>());
    T* py = y->mutable_data<T>();
    const size_t n = ins.size();
    for_each_broadcast(*dims, shapes, [&](int64_t i, const int64_t* off) {
      C acc = to_compute(p[0][off[0]]);
      for (size_t k = 1; k < n; ++k) {
        C v = to_compute(p[k][off[k]]);
        if constexpr (kOp == Fold::kSum || kOp == Fold::kMean) {
          acc = ew::add(acc, v);
        } else {
          if constexpr (ew::is_float_v<T>) {
            if (std::isnan(acc)) continue;
            if (std::isnan(v)) {
              acc = v;
              continue;
            }
          }
          if (kOp == Fold::kMax ? v > acc : v < acc) acc = v;
        }
      }
      if constexpr (kOp == Fold::kMean) acc = acc / static_cast<C>(n);
      py[i] = ew::store<T>(acc);
    });
    return Status::ok();
  });
}

// Where(condition: bool, X: T, Y: T) -> T, any T including strings.
Status where(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* c, ew::required_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* yv, ew::required_input(ctx, 2));
  if (c->dtype() != ir::DType::kBool)
    return ctx.error("condition must be bool, got " + std::string(ir::dtype_name(c->dtype())));
  XOPT_RETURN_IF_ERROR(ew::same_dtype(ctx, {x, yv}));
  std::vector<std::vector<int64_t>> shapes = {c->dims(), x->dims(), yv->dims()};
  auto dims = broadcast_shapes(shapes);
  if (!dims.is_ok()) return ctx.error(dims.status().message());
  const bool* pc = c->data<bool>();
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * out, ctx.output(0, x->dtype(), *dims));
  if (x->dtype() == ir::DType::kString) {
    auto& so = out->mutable_strings();
    for_each_broadcast(*dims, shapes, [&](int64_t i, const int64_t* off) {
      so[static_cast<size_t>(i)] = pc[off[0]] ? x->strings()[static_cast<size_t>(off[1])]
                                              : yv->strings()[static_cast<size_t>(off[2])];
    });
    return Status::ok();
  }
  const size_t es = ir::dtype_size(x->dtype());
  if (es == 0) return ctx.unsupported("element type " + std::string(ir::dtype_name(x->dtype())));
  // Elements are moved, not computed: copy bytes (any fixed-size type, complex included).
  const auto* px = static_cast<const std::byte*>(x->raw_data());
  const auto* pyv = static_cast<const std::byte*>(yv->raw_data());
  auto* po = static_cast<std::byte*>(out->mutable_raw_data());
  for_each_broadcast(*dims, shapes, [&](int64_t i, const int64_t* off) {
    const std::byte* src = pc[off[0]] ? px + off[1] * static_cast<int64_t>(es)
                                      : pyv + off[2] * static_cast<int64_t>(es);
    std::memmove(po + i * static_cast<int64_t>(es), src, es);
  });
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "Max", 6, kLastOpset, variadic<Fold::kMax>);
XOPT_CPU_KERNEL("", "Min", 6, kLastOpset, variadic<Fold::kMin>);
XOPT_CPU_KERNEL("", "Sum", 6, kLastOpset, variadic<Fold::kSum>);
XOPT_CPU_KERNEL("", "Mean", 6, kLastOpset, variadic<Fold::kMean>);
XOPT_CPU_KERNEL("", "Where", 9, kLastOpset, where);

}  // namespace xopt::exec
