// Normalization and regularization: BatchNormalization, InstanceNormalization, LayerNormalization,
// GroupNormalization, LRN, LpNormalization, MeanVarianceNormalization and Dropout.
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Status infer_batch_norm(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 5, 5));
  if (ctx.opset() >= 14 && ctx.num_outputs() != 1 && ctx.num_outputs() != 3)
    return ctx.error("has " + std::to_string(ctx.num_outputs()) +
                     " outputs; from opset 14 it has 1 or 3");
  if (ctx.num_outputs() > 5) return ctx.error("has more than 5 outputs");
  const Shape& x = ctx.input_shape(0);
  ctx.set_output(0, ctx.input_dtype(0), x);
  // From opset 9 (no `spatial` attribute) the statistics are per channel: rank 1, size C.
  if (ctx.opset() >= 9 || ctx.node().attr_int("spatial", 1) != 0) {
    Dim c = x.has_rank() ? (x.rank() > 1 ? x[1] : Dim(1)) : Dim();
    for (size_t i = 1; i < 5; ++i) {
      const Shape& s = ctx.input_shape(i);
      if (!s.has_rank()) continue;
      if (s.rank() != 1)
        return ctx.error("input " + std::to_string(i) + " must be 1-D, got " + str(s));
      if (c.is_known() && s[0].is_known() && s[0].value != c.value)
        return ctx.error("input " + std::to_string(i) + " " + str(s) + " does not match " +
                         c.to_string() + " channels of X " + str(x));
    }
  }
  // running mean / var, then (opsets before 14) saved mean / var, all shaped like the mean input.
  ctx.set_output(1, ctx.input_dtype(3), ctx.input_shape(3));
  ctx.set_output(2, ctx.input_dtype(4), ctx.input_shape(4));
  ctx.set_output(3, ctx.input_dtype(0), ctx.input_shape(3));
  ctx.set_output(4, ctx.input_dtype(0), ctx.input_shape(4));
  return Status::ok();
}

Status infer_layer_norm(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 3));
  const Shape& x = ctx.input_shape(0);
  ctx.set_output(0, ctx.input_dtype(0), x);
  int64_t stash = ctx.node().attr_int("stash_type", 1);
  if (stash != static_cast<int64_t>(DType::kFloat) &&
      stash != static_cast<int64_t>(DType::kDouble) &&
      stash != static_cast<int64_t>(DType::kFloat16) &&
      stash != static_cast<int64_t>(DType::kBFloat16))
    return ctx.error("stash_type " + std::to_string(stash) + " is not a floating-point type");
  if (!x.has_rank()) {
    ctx.set_output(1, static_cast<DType>(stash), Shape());
    ctx.set_output(2, static_cast<DType>(stash), Shape());
    return Status::ok();
  }
  auto axis =
      normalize_axis(ctx.node().attr_int("axis", -1), static_cast<int64_t>(x.rank()), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  std::vector<Dim> stats(x.dims().begin(), x.dims().begin() + *axis);
  stats.resize(x.rank(), Dim(1));
  ctx.set_output(1, static_cast<DType>(stash), Shape(stats));
  ctx.set_output(2, static_cast<DType>(stash), Shape(stats));
  return Status::ok();
}

Status infer_lrn(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  if (!ctx.node().has_attr("size")) return ctx.error("attribute size is missing");
  return infer_same_as_input(ctx);
}

Status infer_scaled_norm(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  return infer_same_as_input(ctx);
}

Status infer_dropout(InferenceContext& ctx) {
  const int64_t v = ctx.opset();
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, v >= 12 ? 3 : 1));
  for (size_t i = 1; i < 3; ++i) {
    const Shape& s = ctx.input_shape(i);
    if (ctx.has_input(i) && s.has_rank() && s.rank() != 0)
      return ctx.error(std::string(i == 1 ? "ratio" : "training_mode") + " must be a scalar, got " +
                       str(s));
  }
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  // The mask is bool from opset 10, the data type before.
  ctx.set_output(1, v >= 10 ? DType::kBool : ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

}  // namespace

void register_norm_ops(OpList& ops) {
  // BatchNormalization: 5 outputs (with saved mean/var) until 13, 1 or 3 from 14.
  ops.push_back(make_op("BatchNormalization", 1, 13, infer_batch_norm));
  ops.push_back(make_op("BatchNormalization", 14, kMaxOpset, infer_batch_norm));
  ops.push_back(make_op("InstanceNormalization", 1, kMaxOpset, infer_scaled_norm));
  ops.push_back(make_op("LayerNormalization", 17, kMaxOpset, infer_layer_norm));
  ops.push_back(make_op("GroupNormalization", 18, kMaxOpset, infer_scaled_norm));
  ops.push_back(make_op("LRN", 1, kMaxOpset, infer_lrn));
  ops.push_back(make_op("LpNormalization", 1, kMaxOpset, infer_same_as_input));
  ops.push_back(make_op("MeanVarianceNormalization", 9, kMaxOpset, infer_same_as_input));
  // Dropout: mask of the data type until 9, bool from 10; ratio and training_mode inputs from 12.
  ops.push_back(make_op("Dropout", 1, 9, infer_dropout, kView));
  ops.push_back(make_op("Dropout", 10, 11, infer_dropout, kView));
  ops.push_back(make_op("Dropout", 12, kMaxOpset, infer_dropout, kView));
}

}  // namespace xopt::ir::ops
