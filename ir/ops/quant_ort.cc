// Shape inference of onnxruntime's com.microsoft quantized operators in QOperator form
// (contrib_defs.cc / quantization_defs.cc; executor/cpu/kernels/quant_ort.cc and quant_matmul.cc
// compute them): QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearSigmoid,
// QLinearConcat, QLinearSoftmax, QGemm.
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

bool eight_bit(DType t) {
  return t == DType::kUndefined || t == DType::kUInt8 || t == DType::kInt8;
}

Status check_eight_bit(const InferenceContext& ctx, size_t i, const char* what) {
  if (eight_bit(ctx.input_dtype(i))) return Status::ok();
  return ctx.error(std::string(what) + " must be uint8 or int8, got " +
                   std::string(dtype_name(ctx.input_dtype(i))));
}

// A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point: broadcast.
Status infer_qlinear_binary(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 7, 8));
  if (!ctx.has_input(0) || !ctx.has_input(3)) return ctx.error("A and B are required");
  XOPT_RETURN_IF_ERROR(check_eight_bit(ctx, 0, "A"));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 3));
  XOPT_ASSIGN_OR_RETURN(Shape s, broadcast_shapes(ctx.input_shape(0), ctx.input_shape(3)));
  ctx.set_output(0, ctx.input_dtype(0), std::move(s));
  return Status::ok();
}

// X, X_scale, X_zero_point, Y_scale, Y_zero_point: X's type and shape.
Status infer_qlinear_unary(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 4, 5));
  XOPT_RETURN_IF_ERROR(check_eight_bit(ctx, 0, "X"));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

// The spatial dims become 1: [N, C, 1...] (channels_last: [N, 1..., C]).
Status infer_qlinear_global_average_pool(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 5, 5));
  XOPT_RETURN_IF_ERROR(check_eight_bit(ctx, 0, "X"));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape());
    return Status::ok();
  }
  if (x.rank() < 3) return ctx.error("X must have rank >= 3, got " + str(x));
  const bool last = ctx.node().attr_int("channels_last", 0) != 0;
  std::vector<Dim> dims = x.dims();
  for (size_t k = last ? 1 : 2; k < (last ? dims.size() - 1 : dims.size()); ++k) dims[k] = Dim(1);
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::move(dims)));
  return Status::ok();
}

Status infer_qlinear_softmax(InferenceContext& ctx) {
  if (!ctx.node().has_attr("opset")) return ctx.error("the opset attribute is required");
  return infer_qlinear_unary(ctx);
}

// Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples, concatenated along axis; the
// output has Y_zero_point's type.
Status infer_qlinear_concat(InferenceContext& ctx) {
  const size_t n = ctx.num_inputs();
  if (n < 5 || (n - 2) % 3 != 0)
    return ctx.error("takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got " +
                     std::to_string(n) + " inputs");
  const DType t = ctx.input_dtype(1);
  XOPT_RETURN_IF_ERROR(check_eight_bit(ctx, 1, "Y_zero_point"));
  std::optional<Shape> first;
  bool ranked = true;
  for (size_t i = 2; i < n; i += 3) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    XOPT_RETURN_IF_ERROR(check_eight_bit(ctx, i, "X"));
    if (!ctx.input_shape(i).has_rank()) ranked = false;
    if (!first) first = ctx.input_shape(i);
  }
  if (!ranked) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const size_t rank = first->rank();
  if (rank == 0) return ctx.error("cannot concatenate scalars");
  auto axis = normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(rank), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const auto a = static_cast<size_t>(*axis);
  std::vector<Dim> dims = first->dims();
  dims[a] = Dim(0);
  for (size_t i = 2; i < n; i += 3) {
    const Shape& s = ctx.input_shape(i);
    if (s.rank() != rank)
      return ctx.error("inputs differ in rank: " + str(*first) + " vs " + str(s));
    for (size_t d = 0; d < rank; ++d) {
      if (d == a) continue;
      if (s[d].is_known() && dims[d].is_known() && s[d].value != dims[d].value)
        return ctx.error("inputs " + str(*first) + " and " + str(s) + " differ outside axis " +
                         std::to_string(a));
      if (!dims[d].is_known()) dims[d] = s[d];
    }
    dims[a] = add_dims(dims[a], s[a]);
  }
  ctx.set_output(0, t, Shape(std::move(dims)));
  return Status::ok();
}

// A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point: [M, N] of
// y_zero_point's type, float without it.
Status infer_qgemm(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 6, 9));
  XOPT_RETURN_IF_ERROR(check_eight_bit(ctx, 0, "A"));
  XOPT_RETURN_IF_ERROR(check_eight_bit(ctx, 3, "B"));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(3);
  const DType t = ctx.has_input(8) ? ctx.input_dtype(8) : DType::kFloat;
  if (!a.has_rank() || !b.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  if (a.rank() != 2 || b.rank() != 2)
    return ctx.error("A and B must be 2-D, got " + str(a) + " and " + str(b));
  const bool ta = ctx.node().attr_int("transA", 0) != 0;
  const bool tb = ctx.node().attr_int("transB", 0) != 0;
  const Dim& ka = a[ta ? 0 : 1];
  const Dim& kb = b[tb ? 1 : 0];
  if (ka.is_known() && kb.is_known() && ka.value != kb.value)
    return ctx.error("A " + str(a) + " and B " + str(b) + " do not match (transA " +
                     std::to_string(ta) + ", transB " + std::to_string(tb) + ")");
  ctx.set_output(0, t, Shape({a[ta ? 1 : 0], b[tb ? 0 : 1]}));
  return Status::ok();
}

}  // namespace

void register_quant_ort_ops(OpList& ops) {
  for (const char* op : {"QLinearAdd", "QLinearMul"})
    ops.push_back(make_op(op, 1, 1, infer_qlinear_binary, kNoFlags, kMsDomain));
  ops.push_back(make_op("QLinearGlobalAveragePool", 1, 1, infer_qlinear_global_average_pool,
                        kNoFlags, kMsDomain));
  ops.push_back(make_op("QLinearSigmoid", 1, 1, infer_qlinear_unary, kNoFlags, kMsDomain));
  ops.push_back(make_op("QLinearSoftmax", 1, 1, infer_qlinear_softmax, kNoFlags, kMsDomain));
  ops.push_back(make_op("QLinearConcat", 1, 1, infer_qlinear_concat, kNoFlags, kMsDomain));
  ops.push_back(make_op("QGemm", 1, 1, infer_qgemm, kNoFlags, kMsDomain));
}

}  // namespace xopt::ir::ops
