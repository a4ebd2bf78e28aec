// Reductions: Reduce* (axes an attribute, or an input from opset 13 for ReduceSum and 18 for the
// others, with noop_with_empty_axes), ArgMax and ArgMin.
#include <algorithm>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

template <int kAxesInputFrom>
Status infer_reduce(InferenceContext& ctx) {
  const bool input_form = ctx.opset() >= kAxesInputFrom;
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, input_form ? 2 : 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  const bool keepdims = ctx.node().attr_int("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (input_form) {
    axes = ctx.has_input(1) ? ctx.input_ints(1) : std::vector<int64_t>{};
    if (ctx.has_input(1) && ctx.input_shape(1).has_rank() && ctx.input_shape(1).rank() != 1)
      return ctx.error("axes must be 1-D, got " + str(ctx.input_shape(1)));
  } else {
    axes = ctx.node().attr_ints("axes");
  }
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const int64_t r = static_cast<int64_t>(x.rank());
  if (!axes) {
    // Reduced axes unknown: with keepdims the rank stays.
    ctx.set_output(0, t, keepdims ? Shape(std::vector<Dim>(x.rank())) : Shape());
    return Status::ok();
  }
  if (axes->empty()) {
    if (input_form && ctx.node().attr_int("noop_with_empty_axes", 0) != 0) {
      ctx.set_output(0, t, x);
      if (const SymData* d = ctx.input_data(0)) ctx.set_output_data(0, *d);
      return Status::ok();
    }
    for (int64_t i = 0; i < r; ++i) axes->push_back(i);
  }
  auto norm = normalize_axes(*axes, r, "axes");
  if (!norm.is_ok()) return ctx.error(norm.status().message());
  std::vector<Dim> out;
  for (int64_t i = 0; i < r; ++i) {
    bool reduced = std::find(norm->begin(), norm->end(), i) != norm->end();
    if (!reduced) {
      out.push_back(x[static_cast<size_t>(i)]);
    } else if (keepdims) {
      out.push_back(Dim(1));
    }
  }
  // Sum and product of 1-D shape data (numel computations).
  const std::string& op = ctx.node().op_type();
  if (r == 1 && is_integer(t) && (op == "ReduceProd" || op == "ReduceSum"))
    if (const SymData* d = ctx.input_data(0)) {
      int64_t acc = op == "ReduceProd" ? 1 : 0;
      bool known = true;
      for (const SymInt& e : *d) {
        known = known && e.is_known();
        if (known)
          acc = op == "ReduceProd" ? wrapping_mul(acc, *e.value) : wrapping_add(acc, *e.value);
      }
      ctx.set_output_data(0, {known ? SymInt::known(acc) : SymInt::unknown()});
    }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Status infer_arg_reduce(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, DType::kInt64, Shape());
    return Status::ok();
  }
  auto axis =
      normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(x.rank()), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  std::vector<Dim> out = x.dims();
  if (ctx.node().attr_int("keepdims", 1) != 0) {
    out[static_cast<size_t>(*axis)] = Dim(1);
  } else {
    out.erase(out.begin() + *axis);
  }
  ctx.set_output(0, DType::kInt64, Shape(std::move(out)));
  return Status::ok();
}

}  // namespace

void register_reduce_ops(OpList& ops) {
  ops.push_back(make_op("ReduceSum", 1, 12, infer_reduce<13>));
  ops.push_back(make_op("ReduceSum", 13, kMaxOpset, infer_reduce<13>));
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    ops.push_back(make_op(op, 1, 17, infer_reduce<18>));
    ops.push_back(make_op(op, 18, kMaxOpset, infer_reduce<18>));
  }
  for (const char* op : {"ArgMax", "ArgMin"})
    ops.push_back(make_op(op, 1, kMaxOpset, infer_arg_reduce));
}

}  // namespace xopt::ir::ops
