// Shape inference of the linear ai.onnx.ml ops (executor/cpu/kernels/ml_linear.cc computes them):
// Scaler, ArrayFeatureExtractor, LinearRegressor, LinearClassifier.
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

constexpr const char* kMlDomain = "ai.onnx.ml";

bool numeric_input(DType t) {
  return t == DType::kUndefined || t == DType::kFloat || t == DType::kDouble ||
         t == DType::kInt64 || t == DType::kInt32;
}

// X of [N, C] or [C]: N (1 for [C]), or unknown.
Result<Dim> batch_of(const InferenceContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (!numeric_input(ctx.input_dtype(0)))
    return ctx.error("X must be float, double, int64 or int32");
  if (!x.has_rank()) return Dim();
  if (x.rank() == 0 || x.rank() > 2) return ctx.error("X must be [N, C] or [C], got " + str(x));
  return x.rank() == 1 ? Dim(1) : x[0];
}

Status infer_scaler(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  if (!numeric_input(ctx.input_dtype(0)))
    return ctx.error("X must be float, double, int64 or int32");
  ctx.set_output(0, DType::kFloat, ctx.input_shape(0));
  return Status::ok();
}

Status infer_array_feature_extractor(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& x = ctx.input_shape(0);
  const Shape& y = ctx.input_shape(1);
  if (!x.has_rank()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape());
    return Status::ok();
  }
  if (x.rank() == 0) return ctx.error("X must have rank >= 1");
  std::vector<Dim> dims = x.dims();
  if (dims.size() == 1) dims.insert(dims.begin(), Dim(1));
  auto n = y.numel();
  dims.back() = y.is_static() && n ? Dim(*n) : Dim();
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::move(dims)));
  return Status::ok();
}

Status infer_linear_regressor(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  XOPT_ASSIGN_OR_RETURN(Dim n, batch_of(ctx));
  const int64_t targets = ctx.node().attr_int("targets", 1);
  if (targets < 1 || targets > kMaxDim) return ctx.error("targets must be positive");
  ctx.set_output(0, DType::kFloat, Shape({n, Dim(targets)}));
  return Status::ok();
}

Status infer_linear_classifier(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  XOPT_ASSIGN_OR_RETURN(Dim n, batch_of(ctx));
  const bool strings = ctx.node().has_attr("classlabels_strings");
  const size_t labels =
      strings ? static_cast<size_t>(ctx.node().attr("classlabels_strings")->strings_size())
              : ctx.node().attr_ints("classlabels_ints").size();
  if (strings == ctx.node().has_attr("classlabels_ints"))
    return ctx.error("exactly one of classlabels_ints and classlabels_strings must be given");
  const auto classes = static_cast<int64_t>(ctx.node().attr_floats("intercepts").size());
  if (classes < 1) return ctx.error("intercepts must hold one value per class");
  ctx.set_output(0, strings ? DType::kString : DType::kInt64, Shape({n}));
  ctx.set_output(1, DType::kFloat, Shape({n, Dim(classes == 1 && labels == 2 ? 2 : classes)}));
  return Status::ok();
}

}  // namespace

void register_ml_ops(OpList& ops) {
  ops.push_back(make_op("Scaler", 1, kMaxOpset, infer_scaler, kNoFlags, kMlDomain));
  ops.push_back(make_op("ArrayFeatureExtractor", 1, kMaxOpset, infer_array_feature_extractor,
                        kNoFlags, kMlDomain));
  ops.push_back(
      make_op("LinearRegressor", 1, kMaxOpset, infer_linear_regressor, kNoFlags, kMlDomain));
  ops.push_back(
      make_op("LinearClassifier", 1, kMaxOpset, infer_linear_classifier, kNoFlags, kMlDomain));
}

}  // namespace xopt::ir::ops
