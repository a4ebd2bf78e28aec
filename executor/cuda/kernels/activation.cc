// Unary math, activations and the Gelu family on the GPU. Attributes and constant inputs (Clip's
// bounds) are read at compile time into UnaryParams. Semantics follow
// executor/cpu/kernels/elementwise_{unary,activation,gelu}.cc.
#include <limits>

#include "executor/cuda/kernels/activation.cuh"
#include "executor/cuda/kernels/compile_util.h"

namespace xopt::cuda {
namespace {

enum class Types { kFloat, kNumeric, kFloatToBool, kBool };

Result<Launch> unary(CompileContext& ctx, UnaryOp op, Types types, const UnaryParams& prm) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  bool ok = false;
  switch (types) {
    case Types::kFloat:
    case Types::kFloatToBool:
      ok = is_float_type(x->dtype);
      break;
    case Types::kNumeric:
      ok =
          is_float_type(x->dtype) || x->dtype == ir::DType::kInt32 || x->dtype == ir::DType::kInt64;
      break;
    case Types::kBool:
      ok = x->dtype == ir::DType::kBool;
      break;
  }
  if (!ok)
    return ctx.unsupported("element type " + type_text(x->dtype) + " is not supported on the GPU");
  if (y->numel() != x->numel()) return ctx.error("output has another element count");
  if (types != Types::kFloatToBool && y->dtype != x->dtype)
    return ctx.error("output is " + type_text(y->dtype) + " but the input " + type_text(x->dtype));
  const int64_t n = x->numel();
  if (n == 0) return no_op_launch();
  const ElemType t = *elem_type(x->dtype);
  const void* px = x->data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_unary(op, t, px, py, n, prm, env.stream));
  });
}

CompileFn simple(UnaryOp op, Types types = Types::kFloat) {
  return [op, types](CompileContext& ctx) { return unary(ctx, op, types, UnaryParams{}); };
}

// An op whose parameters come from attributes: `alpha` (and beta / gamma) with their defaults.
CompileFn with_alpha(UnaryOp op, float alpha) {
  return [op, alpha](CompileContext& ctx) {
    UnaryParams p;
    p.alpha = ctx.node().attr_float("alpha", alpha);
    return unary(ctx, op, Types::kFloat, p);
  };
}

Result<Launch> selu(CompileContext& ctx) {
  UnaryParams p;
  p.alpha = ctx.node().attr_float("alpha", 1.67326319217681884765625f);
  p.gamma = ctx.node().attr_float("gamma", 1.05070102214813232421875f);
  return unary(ctx, UnaryOp::kSelu, Types::kFloat, p);
}

Result<Launch> hard_sigmoid(CompileContext& ctx) {
  UnaryParams p;
  p.alpha = ctx.node().attr_float("alpha", 0.2f);
  p.beta = ctx.node().attr_float("beta", 0.5f);
  return unary(ctx, UnaryOp::kHardSigmoid, Types::kFloat, p);
}

Result<Launch> is_inf(CompileContext& ctx) {
  UnaryParams p;
  p.has_lo = ctx.node().attr_int("detect_negative", 1) != 0;
  p.has_hi = ctx.node().attr_int("detect_positive", 1) != 0;
  return unary(ctx, UnaryOp::kIsInf, Types::kFloatToBool, p);
}

// Clip: attributes min/max before opset 11; optional scalar inputs from 11 on (constants are read
// at compile time, computed bounds on the device).
Result<Launch> clip(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  UnaryParams p;
  p.bound_type = et;
  if (ctx.opset() < 11) {
    p.lo = ctx.node().attr_float("min", std::numeric_limits<float>::lowest());
    p.hi = ctx.node().attr_float("max", std::numeric_limits<float>::max());
    p.has_lo = p.has_hi = true;
  } else {
    for (size_t i = 1; i <= 2; ++i) {
      if (ctx.input(i) == nullptr) continue;
      const DeviceTensor* b = ctx.input(i);
      if (b->dtype != x->dtype)
        return ctx.error("bound is " + type_text(b->dtype) + " but the input " +
                         type_text(x->dtype));
      if (b->numel() != 1) return ctx.error("bound must be a scalar");
      (i == 1 ? p.has_lo : p.has_hi) = true;
      if (ctx.constant(i) == nullptr) {
        (i == 1 ? p.lo_ptr : p.hi_ptr) = b->data;
        continue;
      }
      XOPT_ASSIGN_OR_RETURN(auto v, const_doubles(ctx, i, i == 1 ? "min" : "max"));
      (i == 1 ? p.lo : p.hi) = static_cast<float>(v[0]);
    }
  }
  return unary(ctx, UnaryOp::kClip, Types::kFloat, p);
}

// y = op(x + bias) with the bias one row of x's trailing dims (any leading ones dropped), or op(x)
// without a bias.
Result<Launch> with_bias(CompileContext& ctx, UnaryOp op, const UnaryParams& prm, size_t bias_at) {
  const DeviceTensor* bias = ctx.input(bias_at);
  if (bias == nullptr) return unary(ctx, op, Types::kFloat, prm);
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  XOPT_RETURN_IF_ERROR(same_type(ctx, x->dtype, {bias, y}));
  // The bias must be x's trailing dims (after dropping its leading ones).
  std::vector<int64_t> bd = bias->dims;
  while (!bd.empty() && bd.front() == 1) bd.erase(bd.begin());
  bool row = bd.size() <= x->dims.size();
  for (size_t i = 0; row && i < bd.size(); ++i)
    row = bd[bd.size() - 1 - i] == x->dims[x->dims.size() - 1 - i];
  if (!row || y->dims != x->dims)
    return ctx.unsupported("bias " + ir::dims_string(bias->dims) + " is not a row of input " +
                           ir::dims_string(x->dims));
  const int64_t n = x->numel(), bn = dims_product(bd);
  if (n == 0) return no_op_launch();
  const void* px = x->data;
  const void* pb = bias->data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_bias_unary(op, et, px, pb, py, n, bn, prm, env.stream));
  });
}

Result<Launch> gelu(CompileContext& ctx) {
  const std::string approx = ctx.node().attr_string("approximate", "none");
  if (approx == "none") return unary(ctx, UnaryOp::kGelu, Types::kFloat, {});
  if (approx == "tanh") return unary(ctx, UnaryOp::kGeluTanh, Types::kFloat, {});
  return ctx.error("approximate must be \"none\" or \"tanh\", got \"" + approx + "\"");
}

Result<Launch> ms_gelu(CompileContext& ctx) {
  return unary(ctx, UnaryOp::kGelu, Types::kFloat, {});
}
Result<Launch> ms_fast_gelu(CompileContext& ctx) {
  return with_bias(ctx, UnaryOp::kGeluTanh, {}, 1);
}
Result<Launch> ms_bias_gelu(CompileContext& ctx) {
  if (ctx.input(1) == nullptr) return ctx.error("BiasGelu needs a bias input");
  return with_bias(ctx, UnaryOp::kGelu, {}, 1);
}
Result<Launch> ms_quick_gelu(CompileContext& ctx) {
  UnaryParams p;
  p.alpha = ctx.node().attr_float("alpha", 1.702f);
  return unary(ctx, UnaryOp::kQuickGelu, Types::kFloat, p);
}

constexpr const char* kMs = "com.microsoft";
constexpr const char* kNumericTypes = "float32, float16, bfloat16, int32, int64";

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Relu", 6, kLastOpset, simple(UnaryOp::kRelu, Types::kNumeric),
                       kNumericTypes);
XOPT_CUDA_KERNEL_TYPES("", "Abs", 6, kLastOpset, simple(UnaryOp::kAbs, Types::kNumeric),
                       kNumericTypes);
XOPT_CUDA_KERNEL_TYPES("", "Neg", 6, kLastOpset, simple(UnaryOp::kNeg, Types::kNumeric),
                       kNumericTypes);
XOPT_CUDA_KERNEL_TYPES("", "Sign", 9, kLastOpset, simple(UnaryOp::kSign, Types::kNumeric),
                       kNumericTypes);
XOPT_CUDA_KERNEL_TYPES("", "LeakyRelu", 6, kLastOpset, with_alpha(UnaryOp::kLeakyRelu, 0.01f),
                       kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Elu", 6, kLastOpset, with_alpha(UnaryOp::kElu, 1.0f), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Selu", 6, kLastOpset, selu, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Celu", 12, kLastOpset, with_alpha(UnaryOp::kCelu, 1.0f), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ThresholdedRelu", 10, kLastOpset,
                       with_alpha(UnaryOp::kThresholdedRelu, 1.0f), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "HardSigmoid", 6, kLastOpset, hard_sigmoid, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "HardSwish", 14, kLastOpset, simple(UnaryOp::kHardSwish), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Softplus", 1, kLastOpset, simple(UnaryOp::kSoftplus), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Softsign", 1, kLastOpset, simple(UnaryOp::kSoftsign), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Sigmoid", 6, kLastOpset, simple(UnaryOp::kSigmoid), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Tanh", 6, kLastOpset, simple(UnaryOp::kTanh), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Exp", 6, kLastOpset, simple(UnaryOp::kExp), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Log", 6, kLastOpset, simple(UnaryOp::kLog), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Sqrt", 6, kLastOpset, simple(UnaryOp::kSqrt), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Reciprocal", 6, kLastOpset, simple(UnaryOp::kReciprocal), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Erf", 9, kLastOpset, simple(UnaryOp::kErf), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Floor", 6, kLastOpset, simple(UnaryOp::kFloor), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Ceil", 6, kLastOpset, simple(UnaryOp::kCeil), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Round", 11, kLastOpset, simple(UnaryOp::kRound), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Sin", 7, kLastOpset, simple(UnaryOp::kSin), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Cos", 7, kLastOpset, simple(UnaryOp::kCos), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Tan", 7, kLastOpset, simple(UnaryOp::kTan), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Asin", 7, kLastOpset, simple(UnaryOp::kAsin), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Acos", 7, kLastOpset, simple(UnaryOp::kAcos), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Atan", 7, kLastOpset, simple(UnaryOp::kAtan), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Sinh", 9, kLastOpset, simple(UnaryOp::kSinh), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Cosh", 9, kLastOpset, simple(UnaryOp::kCosh), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Asinh", 9, kLastOpset, simple(UnaryOp::kAsinh), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Acosh", 9, kLastOpset, simple(UnaryOp::kAcosh), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Atanh", 9, kLastOpset, simple(UnaryOp::kAtanh), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Clip", 6, kLastOpset, clip, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Gelu", 20, kLastOpset, gelu, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "IsNaN", 9, kLastOpset, simple(UnaryOp::kIsNaN, Types::kFloatToBool),
                       "float32, float16, bfloat16 -> bool");
XOPT_CUDA_KERNEL_TYPES("", "IsInf", 10, kLastOpset, is_inf, "float32, float16, bfloat16 -> bool");
XOPT_CUDA_KERNEL_TYPES("", "Not", 1, kLastOpset, simple(UnaryOp::kNot, Types::kBool), "bool");
XOPT_CUDA_KERNEL_TYPES(kMs, "Gelu", 1, 1, ms_gelu, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES(kMs, "FastGelu", 1, 1, ms_fast_gelu, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES(kMs, "BiasGelu", 1, 1, ms_bias_gelu, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES(kMs, "QuickGelu", 1, 1, ms_quick_gelu, kFloatTypes);

}  // namespace xopt::cuda
