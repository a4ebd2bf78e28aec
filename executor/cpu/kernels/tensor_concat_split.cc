// Concat and Split along one axis: both are block copies of [outer, axis * inner] rows.
#include <algorithm>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

Status concat(KernelContext& ctx) {
  std::vector<const ir::Tensor*> xs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.input(i) != nullptr) xs.push_back(ctx.input(i));
  if (xs.empty()) return ctx.error("needs at least one input");
  const ir::Tensor& first = *xs[0];
  const auto rank = static_cast<int64_t>(first.rank());
  if (ctx.opset() >= 4 && !ctx.node().has_attr("axis"))
    return ctx.error("attribute 'axis' is required");
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 1), rank));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> out_dims = first.dims();
  out_dims[a] = 0;
  for (const ir::Tensor* x : xs) {
    bool same = x->rank() == first.rank() && x->dtype() == first.dtype();
    for (size_t i = 0; same && i < x->rank(); ++i) same = i == a || x->dims()[i] == first.dims()[i];
    if (!same)
      return ctx.error("input " + ir::dims_string(x->dims()) + " does not match " +
                       ir::dims_string(first.dims()) + " outside axis " + std::to_string(axis) +
                       " (or has another type)");
    out_dims[a] += x->dims()[a];
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, first.dtype(), out_dims));
  const int64_t outer = product(out_dims, 0, a), inner = product(out_dims, a + 1, out_dims.size());
  const int64_t out_row = out_dims[a] * inner;
  return dispatch_by_size(first.dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    U* dst = mutable_elems<U>(*y);
    int64_t col = 0;
    for (const ir::Tensor* x : xs) {
      const int64_t row = x->dims()[a] * inner;
      const U* src = elems<U>(*x);
      for (int64_t o = 0; o < outer && row > 0; ++o)
        std::copy(src + o * row, src + (o + 1) * row, dst + o * out_row + col);
      col += row;
    }
    return Status::ok();
  });
}

// The chunk sizes along the axis: the `split` attribute (before 13) or input (13+; also the
// optional second input of Split-1), else equal parts over the outputs; from 18 the last part may
// be smaller (num_outputs gives the count).
Result<std::vector<int64_t>> split_sizes(KernelContext& ctx, int64_t dim) {
  std::vector<int64_t> split;
  if (ctx.opset() >= 13 || (ctx.opset() < 2 && has_input(ctx, 1))) {
    if (has_input(ctx, 1)) {
      XOPT_ASSIGN_OR_RETURN(split, int_input(ctx, 1, "split"));
    }
  } else {
    split = ctx.node().attr_ints("split");
  }
  const auto n = static_cast<int64_t>(ctx.num_outputs());
  if (!split.empty()) {
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return ctx.error("split " + ir::dims_string(split) + " has a negative size");
      sum += s;
    }
    if (sum != dim || static_cast<int64_t>(split.size()) != n)
      return ctx.error("split " + ir::dims_string(split) + " does not cover a dim of " +
                       std::to_string(dim) + " with " + std::to_string(n) + " outputs");
    return split;
  }
  int64_t parts = n;
  if (ctx.opset() >= 18 && ctx.node().has_attr("num_outputs")) {
    parts = ctx.node().attr_int("num_outputs", n);
    if (parts != n)
      return ctx.error("num_outputs " + std::to_string(parts) + " differs from the " +
                       std::to_string(n) + " outputs of the node");
  }
  if (parts <= 0) return ctx.error("has no outputs");
  if (dim % parts == 0) return std::vector<int64_t>(static_cast<size_t>(parts), dim / parts);
  if (ctx.opset() < 18)
    return ctx.error("cannot split a dim of " + std::to_string(dim) + " into " +
                     std::to_string(parts) + " equal parts");
  // Chunks of ceil(dim / parts); the last non-empty one is smaller and any after it are empty
  // (dim 5 in 4 parts: 2, 2, 1, 0), as onnxruntime does.
  const int64_t chunk = dim / parts + 1;
  std::vector<int64_t> sizes(static_cast<size_t>(parts));
  for (int64_t k = 0; k < parts; ++k)
    sizes[static_cast<size_t>(k)] = std::clamp<int64_t>(dim - k * chunk, 0, chunk);
  return sizes;
}

Status split(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  const auto rank = static_cast<int64_t>(x->rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  XOPT_ASSIGN_OR_RETURN(auto sizes, split_sizes(ctx, x->dims()[a]));
  const int64_t outer = product(x->dims(), 0, a), inner = product(x->dims(), a + 1, x->rank());
  const int64_t in_row = x->dims()[a] * inner;
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    int64_t col = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      std::vector<int64_t> dims = x->dims();
      dims[a] = sizes[k];
      XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(k, x->dtype(), dims));
      U* dst = mutable_elems<U>(*y);
      const int64_t row = sizes[k] * inner;
      for (int64_t o = 0; o < outer && row > 0; ++o)
        std::copy(src + o * in_row + col, src + o * in_row + col + row, dst + o * row);
      col += row;
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Concat", 1, kLatestOpset, concat);
XOPT_CPU_KERNEL("", "Split", 1, kLatestOpset, split);

}  // namespace xopt::exec
