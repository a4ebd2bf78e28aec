// Unary pointwise ops, Clip, Cast/CastLike and Identity: the output has the input's shape.
#include <cctype>

#include "ir/narrow_float.h"
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Status infer_identity(InferenceContext& ctx) {
  // Identity 16+ also passes sequences and optionals through.
  if (ctx.has_input(0) && !ctx.input(0)->is_tensor()) {
    ctx.set_output_type(0, ctx.input(0)->type());
    return Status::ok();
  }
  XOPT_RETURN_IF_ERROR(infer_same_as_input(ctx));
  if (const SymData* d = ctx.input_data(0)) ctx.set_output_data(0, *d);
  return Status::ok();
}

Status infer_clip_attrs(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  return infer_same_as_input(ctx);
}

Status infer_clip_inputs(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 3));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    const Shape& s = ctx.input_shape(i);
    if (s.is_static() && s.numel() != 1)
      return ctx.error(std::string(i == 1 ? "min" : "max") + " must be a scalar, got " + str(s));
  }
  return infer_same_as_input(ctx);
}

// Refuses a narrow type (ir/narrow_float.h) before the opset that added it to Cast and CastLike.
Status check_type_opset(const InferenceContext& ctx, DType t) {
  const int since = narrow_type_opset(t);
  if (since > ctx.opset())
    return ctx.error(std::string(dtype_name(t)) + " needs opset " + std::to_string(since));
  return Status::ok();
}

// Integer data survives a cast to another integer type (or bool) when the values fit.
std::optional<SymData> cast_data(const SymData& in, DType to) {
  if (!(is_integer(to) || to == DType::kBool)) return std::nullopt;
  SymData out;
  out.reserve(in.size());
  for (const SymInt& e : in) {
    if (!e.is_known()) {
      // A dimension symbol stays the same number in any integer type wide enough to hold it.
      out.push_back(to == DType::kInt64 || to == DType::kInt32 ? e : SymInt::unknown());
      continue;
    }
    int64_t v = *e.value;
    if (to == DType::kBool) {
      out.push_back(SymInt::known(v != 0 ? 1 : 0));
    } else if (to == DType::kInt32 && (v < INT32_MIN || v > INT32_MAX)) {
      out.push_back(SymInt::unknown());
    } else if (!is_signed(to) && v < 0) {
      out.push_back(SymInt::unknown());
    } else {
      out.push_back(e);
    }
  }
  return out;
}

// A small constant cast to a floating-point type stays a constant (Range bounds, Resize scales
// computed from integers).
std::optional<Tensor> cast_constant(const InferenceContext& ctx, DType to) {
  if (to != DType::kFloat && to != DType::kDouble) return std::nullopt;
  const Shape& s = ctx.input_shape(0);
  if (!s.is_static() || *s.numel() > kMaxDataElements) return std::nullopt;
  auto v = ctx.input_doubles(0);
  if (!v || static_cast<int64_t>(v->size()) != *s.numel()) return std::nullopt;
  if (to == DType::kDouble) return Tensor::of<double>(s.static_dims(), *v);
  return Tensor::of<float>(s.static_dims(), std::vector<float>(v->begin(), v->end()));
}

Status finish_cast(InferenceContext& ctx, DType to) {
  ctx.set_output(0, to, ctx.input_shape(0));
  if (const SymData* d = ctx.input_data(0))
    if (auto out = cast_data(*d, to)) ctx.set_output_data(0, std::move(*out));
  if (auto c = cast_constant(ctx, to)) ctx.set_output_constant(0, std::move(*c));
  return Status::ok();
}

// Neg of integer shape data (LayerNormalization's expansion negates an axis).
Status infer_neg(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(infer_same_as_input(ctx));
  const SymData* d = ctx.input_data(0);
  if (d == nullptr || !is_integer(ctx.input_dtype(0))) return Status::ok();
  SymData out;
  for (const SymInt& e : *d)
    out.push_back(e.is_known() ? SymInt::known(-*e.value) : SymInt::unknown());
  ctx.set_output_data(0, std::move(out));
  return Status::ok();
}

Status infer_cast(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const auto* to = ctx.node().attr("to");
  if (to == nullptr) return ctx.error("attribute 'to' is missing");
  DType t = DType::kUndefined;
  if (ctx.opset() < 6) {
    // Cast-1 names the type as a string ("FLOAT", "INT64").
    std::string name = to->s();
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    t = dtype_from_name(name);
    if (t == DType::kUndefined)
      return ctx.error("attribute 'to' names an unknown type '" + to->s() + "'");
  } else {
    if (!is_valid_dtype_code(to->i()))
      return unsupported(ctx.node().describe() + ": Cast to element type " +
                         std::to_string(to->i()) + " is not supported");
    t = static_cast<DType>(to->i());
  }
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, t));
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, ctx.input_dtype(0)));
  return finish_cast(ctx, t);
}

Status infer_cast_like(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, ctx.input_dtype(0)));
  XOPT_RETURN_IF_ERROR(check_type_opset(ctx, ctx.input_dtype(1)));
  return finish_cast(ctx, ctx.input_dtype(1));
}

void unary(OpList& ops, const char* name, int since, InferFn fn = infer_same_as_input) {
  ops.push_back(make_op(name, since, kMaxOpset, fn, kPointwise));
}

}  // namespace

void register_elementwise_ops(OpList& ops) {
  // Math.
  for (const char* op : {"Abs", "Ceil", "Exp", "Floor", "Log", "Reciprocal", "Sqrt", "Tanh"})
    unary(ops, op, 1);
  unary(ops, "Neg", 1, infer_neg);
  for (const char* op : {"Acos", "Asin", "Atan", "Cos", "Sin", "Tan"}) unary(ops, op, 7);
  for (const char* op : {"Acosh", "Asinh", "Atanh", "Cosh", "Sinh", "Erf", "Sign"})
    unary(ops, op, 9);
  unary(ops, "Round", 11);
  unary(ops, "BitwiseNot", 18);
  unary(ops, "Not", 1);
  unary(ops, "IsNaN", 9, infer_same_shape_bool);
  unary(ops, "IsInf", 10, infer_same_shape_bool);
  // Activations.
  for (const char* op :
       {"Relu", "Sigmoid", "Elu", "Selu", "LeakyRelu", "HardSigmoid", "Softplus", "Softsign"})
    unary(ops, op, 1);
  unary(ops, "Shrink", 9);
  unary(ops, "ThresholdedRelu", 10);
  unary(ops, "Celu", 12);
  unary(ops, "HardSwish", 14);
  unary(ops, "Mish", 18);
  unary(ops, "Gelu", 20);
  unary(ops, "Swish", 24);
  // Clip: min/max are attributes until opset 10, optional inputs from 11.
  ops.push_back(make_op("Clip", 1, 10, infer_clip_attrs, kPointwise));
  ops.push_back(make_op("Clip", 11, kMaxOpset, infer_clip_inputs, kPointwise));
  // Cast: `to` is a string at opset 1-5, an element type enum from 6.
  ops.push_back(make_op("Cast", 1, 5, infer_cast, kPointwise));
  ops.push_back(make_op("Cast", 6, kMaxOpset, infer_cast, kPointwise));
  ops.push_back(make_op("CastLike", 15, kMaxOpset, infer_cast_like, kPointwise));
  ops.push_back(make_op("Identity", 1, kMaxOpset, infer_identity, kView));
}

}  // namespace xopt::ir::ops
