// Ops that compute or reinterpret shapes: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze.
// Reshape, Flatten, Squeeze and Unsqueeze are views of their input; shape data flows through them.
#include <algorithm>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Status infer_shape(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, DType::kInt64, Shape({Dim()}));
    return Status::ok();
  }
  int64_t r = static_cast<int64_t>(x.rank());
  int64_t start = 0, end = r;
  if (ctx.opset() >= 15) {
    start = ctx.node().attr_int("start", 0);
    end = ctx.node().attr_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
  }
  SymData data;
  for (int64_t i = start; i < end; ++i) data.push_back(SymInt::from_dim(x[static_cast<size_t>(i)]));
  ctx.set_output(0, DType::kInt64, Shape::of({static_cast<int64_t>(data.size())}));
  ctx.set_output_data(0, std::move(data));
  return Status::ok();
}

Status infer_size(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  ctx.set_output(0, DType::kInt64, Shape::scalar());
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank()) {
    Dim n = product(x, 0, x.rank()).to_dim();
    ctx.set_output_data(0, {SymInt::from_dim(n)});
  }
  return Status::ok();
}

// Output data of a view op: the input's content, when the input has some and the output is 1-D or a
// scalar of the same element count.
void pass_data(InferenceContext& ctx) {
  const SymData* d = ctx.input_data(0);
  if (d == nullptr) return;
  const Shape& in = ctx.input_shape(0);
  if (!in.has_rank() || in.rank() > 1) return;
  ctx.set_output_data(0, *d);
}

Status infer_reshape(InferenceContext& ctx) {
  const bool attr_form = ctx.opset() < 5;
  XOPT_RETURN_IF_ERROR(check_arity(ctx, attr_form ? 1 : 2, attr_form ? 1 : 2));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  SymData target;
  if (attr_form) {
    if (!ctx.node().has_attr("shape")) return ctx.error("attribute shape is missing");
    for (int64_t v : ctx.node().attr_ints("shape")) target.push_back(SymInt::known(v));
  } else {
    const Shape& ts = ctx.input_shape(1);
    if (ts.has_rank() && ts.rank() != 1)
      return ctx.error("shape input must be 1-D, got " + str(ts));
    const SymData* d = ctx.input_data(1);
    if (d == nullptr) {
      // Only the output rank is known.
      if (ts.is_static()) {
        XOPT_ASSIGN_OR_RETURN(size_t rank, rank_of_shape_input(ctx, ts[0]));
        ctx.set_output(0, t, Shape(std::vector<Dim>(rank)));
      } else {
        ctx.set_output(0, t, Shape());
      }
      return Status::ok();
    }
    target = *d;
  }
  const bool allowzero = ctx.opset() >= 14 && ctx.node().attr_int("allowzero", 0) != 0;
  std::vector<Dim> out(target.size());
  int infer_at = -1;
  DimProduct others;
  for (size_t i = 0; i < target.size(); ++i) {
    const SymInt& e = target[i];
    if (e.is_known()) {
      int64_t v = *e.value;
      if (v == 0 && !allowzero) {
        if (x.has_rank() && i >= x.rank())
          return ctx.error("shape " + std::to_string(i) + " is 0 (copy) but the input " + str(x) +
                           " has no dimension " + std::to_string(i));
        out[i] = x.has_rank() ? x[i] : Dim();
      } else if (v == -1) {
        if (infer_at >= 0) return ctx.error("shape has more than one -1");
        if (allowzero && std::any_of(target.begin(), target.end(),
                                     [](const SymInt& s) { return s.is_known() && *s.value == 0; }))
          return ctx.error("shape has both -1 and 0 with allowzero set");
        infer_at = static_cast<int>(i);
        continue;
      } else if (v < -1) {
        return ctx.error("shape has invalid value " + std::to_string(v));
      } else {
        out[i] = v;
      }
    } else {
      out[i] = e.to_dim();
    }
    others.mul(out[i]);
  }
  if (infer_at >= 0) {
    DimProduct total = product(x, 0, x.has_rank() ? x.rank() : 0);
    if (!x.has_rank()) total.unknown = true;
    auto q = total.div(others);
    if (q) {
      out[static_cast<size_t>(infer_at)] = q->to_dim();
    } else if (!total.unknown && !others.unknown && total.symbols.empty() &&
               others.symbols.empty()) {
      return ctx.error("cannot reshape " + str(x) + " to " + str(Shape(out)) +
                       " with -1: sizes do not divide");
    }
  }
  Shape result(std::move(out));
  if (x.is_static() && result.is_static() && *x.numel() != *result.numel())
    return ctx.error("cannot reshape " + str(x) + " (" + std::to_string(*x.numel()) +
                     " elements) to " + str(result) + " (" + std::to_string(*result.numel()) +
                     " elements)");
  if (result.rank() <= 1) pass_data(ctx);
  ctx.set_output(0, t, std::move(result));
  return Status::ok();
}

Status infer_flatten(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape({Dim(), Dim()}));
    return Status::ok();
  }
  int64_t r = static_cast<int64_t>(x.rank());
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis < -r || axis > r)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(r));
  if (axis < 0) axis += r;
  size_t a = static_cast<size_t>(axis);
  ctx.set_output(0, t, Shape({product(x, 0, a).to_dim(), product(x, a, x.rank()).to_dim()}));
  return Status::ok();
}

// Axes from the attribute (before `input_from`) or from input 1; nullopt when an input not known.
// `*present` tells whether axes were given at all.
std::optional<std::vector<int64_t>> read_axes(const InferenceContext& ctx, int input_from,
                                              bool* present) {
  if (ctx.opset() < input_from) {
    *present = ctx.node().has_attr("axes");
    return ctx.node().attr_ints("axes");
  }
  *present = ctx.has_input(1);
  if (!*present) return std::vector<int64_t>{};
  return ctx.input_ints(1);
}

Status infer_squeeze(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, ctx.opset() >= 13 ? 2 : 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  bool present = false;
  auto axes = read_axes(ctx, 13, &present);
  if (!x.has_rank() || !axes) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  std::vector<Dim> out;
  if (!present) {
    for (const Dim& d : x.dims()) {
      if (!d.is_known()) {
        // A symbolic dim may or may not be 1: the rank is unknown.
        ctx.set_output(0, t, Shape());
        return Status::ok();
      }
      if (d.value != 1) out.push_back(d);
    }
  } else {
    auto norm = normalize_axes(*axes, static_cast<int64_t>(x.rank()), "axes");
    if (!norm.is_ok()) return ctx.error(norm.status().message());
    for (size_t i = 0; i < x.rank(); ++i) {
      if (std::find(norm->begin(), norm->end(), static_cast<int64_t>(i)) == norm->end()) {
        out.push_back(x[i]);
      } else if (x[i].is_known() && x[i].value != 1) {
        return ctx.error("cannot squeeze axis " + std::to_string(i) + " of " + str(x) +
                         ": its size is not 1");
      }
    }
  }
  pass_data(ctx);
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Status infer_unsqueeze(InferenceContext& ctx) {
  const bool attr_form = ctx.opset() < 13;
  XOPT_RETURN_IF_ERROR(check_arity(ctx, attr_form ? 1 : 2, attr_form ? 1 : 2));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  if (attr_form && !ctx.node().has_attr("axes")) return ctx.error("attribute axes is missing");
  bool present = false;
  auto axes = read_axes(ctx, 13, &present);
  if (!x.has_rank() || !axes) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  int64_t out_rank = static_cast<int64_t>(x.rank() + axes->size());
  auto norm = normalize_axes(*axes, out_rank, "axes");
  if (!norm.is_ok()) return ctx.error(norm.status().message());
  std::vector<Dim> out;
  size_t k = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::find(norm->begin(), norm->end(), i) != norm->end()) {
      out.push_back(Dim(1));
    } else {
      out.push_back(x[k++]);
    }
  }
  if (out.size() <= 1) pass_data(ctx);
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

}  // namespace

void register_shape_ops(OpList& ops) {
  // Shape: start/end attributes from 15.
  ops.push_back(make_op("Shape", 1, 14, infer_shape));
  ops.push_back(make_op("Shape", 15, kMaxOpset, infer_shape));
  ops.push_back(make_op("Size", 1, kMaxOpset, infer_size));
  // Reshape: the shape is an attribute until 4, an input from 5 (allowzero from 14).
  ops.push_back(make_op("Reshape", 1, 4, infer_reshape, kView));
  ops.push_back(make_op("Reshape", 5, 13, infer_reshape, kView));
  ops.push_back(make_op("Reshape", 14, kMaxOpset, infer_reshape, kView));
  ops.push_back(make_op("Flatten", 1, kMaxOpset, infer_flatten, kView));
  // Squeeze/Unsqueeze: axes are an attribute until 12 and an input from 13.
  ops.push_back(make_op("Squeeze", 1, 12, infer_squeeze, kView));
  ops.push_back(make_op("Squeeze", 13, kMaxOpset, infer_squeeze, kView));
  ops.push_back(make_op("Unsqueeze", 1, 12, infer_unsqueeze, kView));
  ops.push_back(make_op("Unsqueeze", 13, kMaxOpset, infer_unsqueeze, kView));
}

}  // namespace xopt::ir::ops
