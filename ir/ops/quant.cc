// Quantization: QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked),
// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, and onnxruntime's
// com.microsoft DynamicQuantizeMatMul and MatMulIntegerToFloat (contrib_defs.cc,
// quantization_defs.cc).
#include "ir/narrow_float.h"
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

// The scale (input 1) against x (input 0): one element per tensor, a 1-D tensor of x's `axis`
// dim per axis, or x's shape with the `axis` dim divided into blocks of `block_size`.
Status check_scale(const InferenceContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  const Shape& s = ctx.input_shape(1);
  if (!s.has_rank()) return Status::ok();
  const int64_t block = ctx.opset() >= 21 ? ctx.node().attr_int("block_size", 0) : 0;
  if (block < 0 || block > kMaxDim)
    return ctx.error("block_size must be in [0, 2^40], got " + std::to_string(block));
  auto numel = s.numel();
  if (block == 0 && (s.rank() == 0 || (numel && *numel == 1))) return Status::ok();
  if (ctx.opset() < 13) return ctx.error("scale must be a scalar before opset 13, got " + str(s));
  if (!x.has_rank()) return Status::ok();
  auto axis =
      normalize_axis(ctx.node().attr_int("axis", 1), static_cast<int64_t>(x.rank()), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const size_t a = static_cast<size_t>(*axis);
  if (block == 0) {
    if (s.rank() != 1 || (s[0].is_known() && x[a].is_known() && s[0].value != x[a].value))
      return ctx.error("per-axis scale " + str(s) + " must be 1-D of the size of dim " +
                       std::to_string(a) + " of " + str(x));
    return Status::ok();
  }
  if (s.rank() != x.rank())
    return ctx.error("blocked scale " + str(s) + " must have the rank of " + str(x));
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!s[i].is_known() || !x[i].is_known()) continue;
    const int64_t want = i == a ? (x[i].value + block - 1) / block : x[i].value;
    if (s[i].value != want)
      return ctx.error("blocked scale " + str(s) + " does not fit " + str(x) + " with block_size " +
                       std::to_string(block) + " on axis " + std::to_string(a));
  }
  return Status::ok();
}

// Refuses a narrow type (ir/narrow_float.h) before the opset that added it to QuantizeLinear and
// DequantizeLinear; float8e8m0 is only ever a scale.
Status check_type_opset(const InferenceContext& ctx, DType t, bool quantized) {
  const int since = narrow_type_opset(t);
  if (since > ctx.opset())
    return ctx.error(std::string(dtype_name(t)) + " needs opset " + std::to_string(since));
  if (quantized && t == DType::kFloat8E8M0)
    return ctx.error("float8e8m0 is a scale type, not a quantized type");
  return Status::ok();
}

Status infer_quantize_linear(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 3));
  XOPT_RETURN_IF_ERROR(check_scale(ctx));
  DType t = DType::kUInt8;
  const int64_t attr = ctx.opset() >= 21 ? ctx.node().attr_int("output_dtype", 0) : 0;
  if (ctx.has_input(2) && ctx.input_dtype(2) != DType::kUndefined) {
    t = ctx.input_dtype(2);
    if (attr != 0 && attr != static_cast<int64_t>(t))
      return ctx.error("output_dtype " + std::to_string(attr) + " differs from the zero point's " +
                       std::string(dtype_name(t)));
  } else if (attr != 0) {
    if (!is_valid_dtype_code(attr))
      return unsupported(ctx.node().describe() + ": output_dtype " + std::to_string(attr) +
                         " is not supported");
    t = static_cast<DType>(attr);
  }
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, t, true));
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, ctx.input_dtype(1), false));
  ctx.set_output(0, t, ctx.input_shape(0));
  return Status::ok();
}

Status infer_dequantize_linear(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 3));
  if (ctx.has_input(2)) XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  XOPT_RETURN_IF_ERROR(check_scale(ctx));
  // float until 19; then the scale's type, or output_dtype from 23.
  DType t = ctx.opset() >= 19 ? ctx.input_dtype(1) : DType::kFloat;
  const int64_t attr = ctx.opset() >= 23 ? ctx.node().attr_int("output_dtype", 0) : 0;
  if (attr != 0) t = static_cast<DType>(attr);
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, ctx.input_dtype(0), true));
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, ctx.input_dtype(1), false));
  ctx.set_output(0, t, ctx.input_shape(0));
  return Status::ok();
}

Status infer_dynamic_quantize_linear(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  ctx.set_output(0, DType::kUInt8, ctx.input_shape(0));
  ctx.set_output(1, DType::kFloat, Shape(std::vector<Dim>{}));
  ctx.set_output(2, DType::kUInt8, Shape(std::vector<Dim>{}));
  return Status::ok();
}

// A matmul of inputs a and b (numpy semantics) into output 0 of type t.
Status set_matmul_output(InferenceContext& ctx, size_t a, size_t b, DType t) {
  auto s = matmul_shape(ctx.input_shape(a), ctx.input_shape(b));
  if (!s.is_ok()) return ctx.error(s.status().message());
  ctx.set_output(0, t, std::move(s).value());
  return Status::ok();
}

Status infer_matmul_integer(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 4));
  return set_matmul_output(ctx, 0, 1, DType::kInt32);
}

// a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
Status infer_qlinear_matmul(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 8, 8));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 3, 5));
  return set_matmul_output(ctx, 0, 3, ctx.input_dtype(7));
}

// x, w, x_zero_point, w_zero_point.
Status infer_conv_integer(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 4));
  XOPT_ASSIGN_OR_RETURN(Shape y, conv_output_shape(ctx, 0, 1, /*bias=*/4));
  ctx.set_output(0, DType::kInt32, std::move(y));
  return Status::ok();
}

// x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (int32).
Status infer_qlinear_conv(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 8, 9));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 3, 5));
  XOPT_ASSIGN_OR_RETURN(Shape y, conv_output_shape(ctx, 0, 3, 8));
  ctx.set_output(0, ctx.has_input(7) ? ctx.input_dtype(7) : ctx.input_dtype(0), std::move(y));
  return Status::ok();
}

// A (float), B (8-bit), b_scale, b_zero_point, bias.
Status infer_dynamic_quantize_matmul(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 5));
  return set_matmul_output(ctx, 0, 1, ctx.input_dtype(0));
}

// A, B (8-bit), a_scale, b_scale, a_zero_point, b_zero_point, bias: the output has a_scale's type.
Status infer_matmul_integer_to_float(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 4, 7));
  return set_matmul_output(ctx, 0, 1, ctx.input_dtype(2));
}

}  // namespace

void register_quant_ops(OpList& ops) {
  // Per axis from 13; float8 and saturate from 19; blocks, int4 and 16-bit types from 21;
  // output_dtype of DequantizeLinear and float4 from 23; float8e8m0 at 24, 2-bit types at 25.
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
    InferFn fn = op[0] == 'Q' ? infer_quantize_linear : infer_dequantize_linear;
    ops.push_back(make_op(op, 10, 12, fn));
    ops.push_back(make_op(op, 13, 18, fn));
    ops.push_back(make_op(op, 19, 20, fn));
    ops.push_back(make_op(op, 21, 22, fn));
    ops.push_back(make_op(op, 23, kMaxOpset, fn));
  }
  ops.push_back(make_op("DynamicQuantizeLinear", 11, kMaxOpset, infer_dynamic_quantize_linear));
  ops.push_back(make_op("MatMulInteger", 10, kMaxOpset, infer_matmul_integer));
  ops.push_back(make_op("ConvInteger", 10, kMaxOpset, infer_conv_integer));
  // QLinearMatMul: float16/bfloat16 scales from 21.
  ops.push_back(make_op("QLinearMatMul", 10, 20, infer_qlinear_matmul));
  ops.push_back(make_op("QLinearMatMul", 21, kMaxOpset, infer_qlinear_matmul));
  ops.push_back(make_op("QLinearConv", 10, kMaxOpset, infer_qlinear_conv));
  ops.push_back(
      make_op("DynamicQuantizeMatMul", 1, 1, infer_dynamic_quantize_matmul, kNoFlags, kMsDomain));
  ops.push_back(
      make_op("MatMulIntegerToFloat", 1, 1, infer_matmul_integer_to_float, kNoFlags, kMsDomain));
}

}  // namespace xopt::ir::ops
