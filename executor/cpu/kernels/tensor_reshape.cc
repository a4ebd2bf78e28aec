// Reshape, Flatten, Squeeze, Unsqueeze: the bytes stay in order, only the dims change.
#include <algorithm>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

// Output 0 is x with new dims: x's bytes where the allocator allows it, else a copy.
Status emit_copy(KernelContext& ctx, const ir::Tensor& x, const std::vector<int64_t>& dims) {
  if (product(dims) != x.numel())
    return ctx.error("cannot give " + ir::dims_string(x.dims()) + " the shape " +
                     ir::dims_string(dims));
  return ctx.forward(0, x.reshaped(dims));
}

// Reshape-5+: shape input; 0 copies the input dim (unless allowzero, opset 14+), -1 is inferred.
// Reshape-1 took the shape as an attribute.
Status reshape(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  std::vector<int64_t> shape;
  if (ctx.opset() < 5) {
    shape = ctx.node().attr_ints("shape");
  } else {
    XOPT_ASSIGN_OR_RETURN(shape, int_input(ctx, 1, "shape"));
  }
  bool allowzero = ctx.opset() >= 14 && ctx.node().attr_int("allowzero", 0) != 0;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) return ctx.error("shape " + ir::dims_string(shape) + " has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (shape[i] == 0 && !allowzero) {
      if (i >= x->rank())
        return ctx.error("shape " + ir::dims_string(shape) + " copies dim " + std::to_string(i) +
                         " of an input of rank " + std::to_string(x->rank()));
      shape[i] = x->dims()[i];
    } else if (shape[i] < 0) {
      return ctx.error("shape " + ir::dims_string(shape) + " has a negative dim");
    }
    known *= shape[i];
  }
  if (infer >= 0) {
    if (allowzero && std::find(shape.begin(), shape.end(), 0) != shape.end())
      return ctx.error("shape " + ir::dims_string(shape) + " has both 0 and -1 with allowzero=1");
    if (known == 0 || x->numel() % known != 0)
      return ctx.error("cannot infer the -1 of shape " + ir::dims_string(shape) + " for input " +
                       ir::dims_string(x->dims()));
    shape[static_cast<size_t>(infer)] = x->numel() / known;
  }
  return emit_copy(ctx, *x, shape);
}

// Flatten: [d0..d(axis-1)] x [d(axis)..]; axis may be rank (then the second dim is 1).
Status flatten(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  auto rank = static_cast<int64_t>(x->rank());
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  if (axis < 0) axis += rank;
  auto a = static_cast<size_t>(axis);
  return emit_copy(ctx, *x, {product(x->dims(), 0, a), product(x->dims(), a, x->rank())});
}

Result<std::vector<int64_t>> axes_of(KernelContext& ctx, bool* given) {
  // An empty list counts as omitted, for the attribute and the input alike (as onnxruntime does).
  std::vector<int64_t> axes;
  if (ctx.opset() < 13) {
    axes = ctx.node().attr_ints("axes");
  } else if (has_input(ctx, 1)) {
    XOPT_ASSIGN_OR_RETURN(axes, int_input(ctx, 1, "axes"));
  }
  *given = !axes.empty();
  return axes;
}

// Squeeze: drops the listed size-1 dims, or every size-1 dim when axes are omitted.
Status squeeze(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  bool given = false;
  XOPT_ASSIGN_OR_RETURN(auto axes, axes_of(ctx, &given));
  auto rank = static_cast<int64_t>(x->rank());
  std::vector<bool> drop(x->rank(), false);
  if (!given) {
    for (size_t i = 0; i < x->rank(); ++i) drop[i] = x->dims()[i] == 1;
  } else {
    for (int64_t a : axes) {
      XOPT_ASSIGN_OR_RETURN(int64_t n, normalize_axis(ctx, a, rank, "axes entry"));
      if (x->dims()[static_cast<size_t>(n)] != 1)
        return ctx.error("cannot squeeze axis " + std::to_string(a) + " of " +
                         ir::dims_string(x->dims()) + ": its size is not 1");
      drop[static_cast<size_t>(n)] = true;
    }
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < x->rank(); ++i)
    if (!drop[i]) dims.push_back(x->dims()[i]);
  return emit_copy(ctx, *x, dims);
}

// Unsqueeze: inserts size-1 dims at the listed positions of the output (negative ones count from
// the end of the output).
Status unsqueeze(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  bool given = false;
  XOPT_ASSIGN_OR_RETURN(auto axes, axes_of(ctx, &given));
  if (!given) return ctx.error("axes are required");
  auto out_rank = static_cast<int64_t>(x->rank() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    XOPT_ASSIGN_OR_RETURN(int64_t n, normalize_axis(ctx, a, out_rank, "axes entry"));
    if (inserted[static_cast<size_t>(n)])
      return ctx.error("axes " + ir::dims_string(axes) + " name the same axis twice");
    inserted[static_cast<size_t>(n)] = true;
  }
  std::vector<int64_t> dims;
  size_t k = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    dims.push_back(inserted[static_cast<size_t>(i)] ? 1 : x->dims()[k++]);
  return emit_copy(ctx, *x, dims);
}

}  // namespace

XOPT_CPU_KERNEL("", "Reshape", 1, kLatestOpset, reshape);
XOPT_CPU_KERNEL("", "Flatten", 1, kLatestOpset, flatten);
XOPT_CPU_KERNEL("", "Squeeze", 1, kLatestOpset, squeeze);
XOPT_CPU_KERNEL("", "Unsqueeze", 1, kLatestOpset, unsqueeze);

}  // namespace xopt::exec
