// Slice: per axis, elements start, start+step, ... up to (excluding) end, after numpy-style
// clamping.
#include <algorithm>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

Status slice(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.node().attr_ints("starts");
    ends = ctx.node().attr_ints("ends");
    axes = ctx.node().attr_ints("axes");
  } else {
    XOPT_ASSIGN_OR_RETURN(starts, int_input(ctx, 1, "starts"));
    XOPT_ASSIGN_OR_RETURN(ends, int_input(ctx, 2, "ends"));
    if (has_input(ctx, 3)) {
      XOPT_ASSIGN_OR_RETURN(axes, int_input(ctx, 3, "axes"));
    }
    if (has_input(ctx, 4)) {
      XOPT_ASSIGN_OR_RETURN(steps, int_input(ctx, 4, "steps"));
    }
  }
  const size_t rank = x->rank();
  const size_t n = starts.size();
  bool axes_given = ctx.opset() < 10 ? ctx.node().has_attr("axes") : has_input(ctx, 3);
  if (!axes_given)
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    return ctx.error("starts " + ir::dims_string(starts) + ", ends " + ir::dims_string(ends) +
                     ", axes " + ir::dims_string(axes) + " and steps " + ir::dims_string(steps) +
                     " differ in length");

  std::vector<int64_t> out_dims = x->dims();
  const auto in_strides = strides_of(x->dims());
  std::vector<int64_t> src_strides = in_strides;
  std::vector<bool> seen(rank, false);
  int64_t base = 0;
  for (size_t i = 0; i < n; ++i) {
    XOPT_ASSIGN_OR_RETURN(int64_t ax,
                          normalize_axis(ctx, axes[i], static_cast<int64_t>(rank), "axes entry"));
    const auto a = static_cast<size_t>(ax);
    if (seen[a]) return ctx.error("axes " + ir::dims_string(axes) + " repeat an axis");
    seen[a] = true;
    const int64_t dim = x->dims()[a], step = steps[i];
    if (step == 0) return ctx.error("steps " + ir::dims_string(steps) + " contain 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t count;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? 1 + (end - start - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // A step below -dim takes one element (and -INT64_MIN would overflow).
      count = start <= end ? 0 : step < -dim ? 1 : 1 + (start - end - 1) / -step;
    }
    out_dims[a] = count;
    if (count > 0) base += start * in_strides[a];
    src_strides[a] = in_strides[a] * step;
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), out_dims));
  if (product(out_dims) == 0) return Status::ok();
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    strided_copy<U>(elems<U>(*x) + base, mutable_elems<U>(*y), out_dims, src_strides);
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Slice", 1, kLatestOpset, slice);

}  // namespace xopt::exec
