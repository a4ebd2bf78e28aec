// The random generators: RandomUniform, RandomNormal (shape from the `shape` attribute),
// RandomUniformLike, RandomNormalLike (shaped like their input), Bernoulli and Multinomial. Their
// values are drawn at run time (the folding passes never fold them: passes/fold/node_traits.h).
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

bool is_float_type(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat || t == DType::kDouble;
}

// `dtype` as given, else `fallback`; an error unless it is a floating type (the generators' T).
Result<DType> float_dtype(const InferenceContext& ctx, DType fallback) {
  const DType t =
      ctx.node().has_attr("dtype") ? static_cast<DType>(ctx.node().attr_int("dtype", 1)) : fallback;
  if (t == DType::kUndefined) return fallback;
  if (!is_float_type(t))
    return ctx.error(std::string("dtype must be float16, bfloat16, float or double, got ") +
                     std::string(dtype_name(t)));
  return t;
}

Status infer_random(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 0, 0));
  const std::vector<int64_t> dims = ctx.node().attr_ints("shape");
  if (!ctx.node().has_attr("shape")) return ctx.error("attribute 'shape' is required");
  std::vector<Dim> shape;
  for (int64_t d : dims) {
    if (d < 0) return ctx.error("shape has a negative dim " + std::to_string(d));
    shape.emplace_back(d);
  }
  XOPT_ASSIGN_OR_RETURN(DType t, float_dtype(ctx, DType::kFloat));
  ctx.set_output(0, t, Shape(shape));
  return Status::ok();
}

Status infer_random_like(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const DType in = ctx.input_dtype(0);
  DType t = in;
  if (ctx.node().has_attr("dtype")) {
    XOPT_ASSIGN_OR_RETURN(t, float_dtype(ctx, in));
  } else if (in != DType::kUndefined && !is_float_type(in)) {
    return ctx.error(std::string("input is ") + std::string(dtype_name(in)) +
                     ": give 'dtype' (the output must be a floating type)");
  }
  ctx.set_output(0, t, ctx.input_shape(0));
  return Status::ok();
}

// Bernoulli: y[i] = 1 with probability x[i]; output type `dtype` (any numeric or bool), default
// the input's.
Status infer_bernoulli(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const DType in = ctx.input_dtype(0);
  if (in != DType::kUndefined && !is_float_type(in))
    return ctx.error(std::string("input must be a floating type, got ") +
                     std::string(dtype_name(in)));
  const DType t =
      ctx.node().has_attr("dtype") ? static_cast<DType>(ctx.node().attr_int("dtype", 1)) : in;
  ctx.set_output(0, t, ctx.input_shape(0));
  return Status::ok();
}

// Multinomial: [batch, class_size] -> [batch, sample_size] of int32 (default) or int64.
Status infer_multinomial(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const auto t = static_cast<DType>(ctx.node().attr_int("dtype", 6));
  if (t != DType::kInt32 && t != DType::kInt64)
    return ctx.error(std::string("dtype must be int32 or int64, got ") +
                     std::string(dtype_name(t)));
  const int64_t samples = ctx.node().attr_int("sample_size", 1);
  if (samples < 1) return ctx.error("sample_size must be at least 1");
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() != 2)
    return ctx.error("input must be [batch_size, class_size], got " + x.to_string());
  ctx.set_output(0, t, x.has_rank() ? Shape({x[0], Dim(samples)}) : Shape({Dim(), Dim(samples)}));
  return Status::ok();
}

}  // namespace

void register_random_ops(OpList& ops) {
  ops.push_back(make_op("RandomUniform", 1, kMaxOpset, infer_random));
  ops.push_back(make_op("RandomNormal", 1, kMaxOpset, infer_random));
  ops.push_back(make_op("RandomUniformLike", 1, kMaxOpset, infer_random_like));
  ops.push_back(make_op("RandomNormalLike", 1, kMaxOpset, infer_random_like));
  ops.push_back(make_op("Bernoulli", 15, kMaxOpset, infer_bernoulli));
  ops.push_back(make_op("Multinomial", 7, kMaxOpset, infer_multinomial));
}

}  // namespace xopt::ir::ops
