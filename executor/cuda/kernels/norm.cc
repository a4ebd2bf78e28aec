// Softmax / LogSoftmax, LayerNormalization and com.microsoft SkipLayerNormalization on the GPU.
// Semantics follow executor/cpu/kernels/reduce_softmax.cc, nn_norm.cc and nn_contrib.cc.
#include <optional>

#include "executor/cuda/kernels/compile_util.h"
#include "executor/cuda/kernels/norm.cuh"

namespace xopt::cuda {
namespace {

Result<Launch> softmax(CompileContext& ctx, bool log) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  XOPT_RETURN_IF_ERROR(same_type(ctx, x->dtype, {y}));
  if (y->dims != x->dims) return ctx.error("output dims differ from the input's");
  const auto rank = static_cast<int64_t>(x->rank());
  // Before opset 13 the input is coerced to 2-D at axis (default 1); from 13 only `axis`
  // (default -1) is normalized.
  const bool coerce = ctx.opset() < 13;
  int64_t axis = ctx.node().attr_int("axis", coerce ? 1 : -1);
  int64_t outer, n, inner;
  if (rank == 0) {
    outer = n = inner = 1;
  } else if (coerce) {
    if (axis != rank) {
      XOPT_ASSIGN_OR_RETURN(axis, fix_axis(ctx, axis, rank));
    }
    const auto a = static_cast<size_t>(axis);
    outer = dims_product(x->dims, 0, a);
    n = dims_product(x->dims, a);
    inner = 1;
  } else {
    XOPT_ASSIGN_OR_RETURN(axis, fix_axis(ctx, axis, rank));
    const auto a = static_cast<size_t>(axis);
    outer = dims_product(x->dims, 0, a);
    n = x->dims[a];
    inner = dims_product(x->dims, a + 1);
  }
  if (x->numel() == 0) return no_op_launch();
  const void* px = x->data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_softmax(et, px, py, outer, n, inner, log, env.stream));
  });
}

Result<Launch> softmax_fn(CompileContext& ctx) {
  return softmax(ctx, false);
}
Result<Launch> log_softmax_fn(CompileContext& ctx) {
  return softmax(ctx, true);
}

// True when `d` (which broadcasts to `x`) is x's dims from `axis` on, with only ones before.
bool is_row_shaped(const std::vector<int64_t>& d, const std::vector<int64_t>& x, size_t axis) {
  if (d.size() > x.size()) return false;
  const size_t pad = x.size() - d.size();
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t di = i < pad ? 1 : d[i - pad];
    if (di != (i < axis ? 1 : x[i])) return false;
  }
  return true;
}

// Optional statistics output i (Mean / InvStdDev), float32 or the input's type, or nullptr;
// every statistics output of the node must have the same type (`*type`, set by the first).
Result<void*> stat_output(const CompileContext& ctx, size_t i, int64_t rows, ir::DType x_type,
                          std::optional<ir::DType>* type) {
  const DeviceTensor* t = ctx.output(i);
  if (t == nullptr) return static_cast<void*>(nullptr);
  if (t->dtype != ir::DType::kFloat && t->dtype != x_type)
    return ctx.unsupported("statistics output " + std::to_string(i) + " of type " +
                           type_text(t->dtype) + " is not supported on the GPU");
  if (type->has_value() && **type != t->dtype)
    return ctx.unsupported("statistics outputs of different types");
  *type = t->dtype;
  if (t->numel() != rows) return ctx.error("statistics output has the wrong element count");
  return t->data;
}

// LayerNormalization-17: statistics over dims [axis, rank); Scale and B one value per column.
Result<Launch> layer_norm(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* scale, need_input(ctx, 1));
  const DeviceTensor* bias = ctx.input(2);
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  XOPT_RETURN_IF_ERROR(same_type(ctx, x->dtype, {scale, bias, y}));
  if (y->dims != x->dims) return ctx.error("output dims differ from the input's");
  const auto rank = static_cast<int64_t>(x->rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, fix_axis(ctx, ctx.node().attr_int("axis", -1), rank));
  const auto a = static_cast<size_t>(axis);
  if (!is_row_shaped(scale->dims, x->dims, a) ||
      (bias != nullptr && !is_row_shaped(bias->dims, x->dims, a)))
    return ctx.unsupported("Scale and B must hold one value per normalized element (shapes " +
                           ir::dims_string(scale->dims) + " for input " + ir::dims_string(x->dims) +
                           ")");
  LayerNormArgs args;
  args.rows = dims_product(x->dims, 0, a);
  args.n = dims_product(x->dims, a);
  args.eps = ctx.node().attr_float("epsilon", 1e-5f);
  args.type = et;
  args.x = x->data;
  args.gamma = scale->data;
  args.beta = bias != nullptr ? bias->data : nullptr;
  args.y = y->data;
  std::optional<ir::DType> stat;
  XOPT_ASSIGN_OR_RETURN(args.mean_out, stat_output(ctx, 1, args.rows, x->dtype, &stat));
  XOPT_ASSIGN_OR_RETURN(args.inv_out, stat_output(ctx, 2, args.rows, x->dtype, &stat));
  args.stat_type = *elem_type(stat.value_or(ir::DType::kFloat));
  if (args.rows * args.n == 0) return no_op_launch();
  return Launch(
      [args](const LaunchEnv& env) { return check_launch(launch_layer_norm(args, env.stream)); });
}

// SkipLayerNormalization(input, skip, gamma, beta?, bias?) over the last dim; skip is input-shaped
// or its trailing dims with ones in front. Outputs: output, mean?, inv_std_var?, input + skip +
// bias?.
Result<Launch> skip_layer_norm(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* skip, need_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* gamma, need_input(ctx, 2));
  const DeviceTensor* beta = ctx.input(3);
  const DeviceTensor* bias = ctx.input(4);
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  XOPT_RETURN_IF_ERROR(same_type(ctx, x->dtype, {skip, gamma, beta, bias, y}));
  if (x->rank() < 2) return ctx.error("input must have rank >= 2, got " + ir::dims_string(x->dims));
  if (y->dims != x->dims) return ctx.error("output dims differ from the input's");
  const int64_t h = x->dims.back();
  const int64_t rows = h > 0 ? x->numel() / h : 0;
  bool skip_ok = skip->rank() <= x->rank() && skip->numel() > 0 && x->numel() % skip->numel() == 0;
  for (size_t i = 0; skip_ok && i < skip->rank(); ++i) {
    const int64_t sd = skip->dims[skip->rank() - 1 - i], xd = x->dims[x->rank() - 1 - i];
    skip_ok = sd == xd || (sd == 1 && dims_product(skip->dims, 0, skip->rank() - i) == 1);
  }
  if (!skip_ok)
    return ctx.error("skip " + ir::dims_string(skip->dims) + " does not fit input " +
                     ir::dims_string(x->dims));
  for (const DeviceTensor* t : {gamma, beta, bias})
    if (t != nullptr && t->numel() != h)
      return ctx.error("gamma, beta and bias must have " + std::to_string(h) + " elements");
  LayerNormArgs args;
  args.rows = rows;
  args.n = h;
  args.eps = ctx.node().attr_float("epsilon", 1e-12f);
  args.type = et;
  args.x = x->data;
  args.skip = skip->data;
  args.skip_rows = h > 0 ? skip->numel() / h : 1;
  args.bias = bias != nullptr ? bias->data : nullptr;
  args.gamma = gamma->data;
  args.beta = beta != nullptr ? beta->data : nullptr;
  args.y = y->data;
  std::optional<ir::DType> stat;
  XOPT_ASSIGN_OR_RETURN(args.mean_out, stat_output(ctx, 1, rows, x->dtype, &stat));
  XOPT_ASSIGN_OR_RETURN(args.inv_out, stat_output(ctx, 2, rows, x->dtype, &stat));
  args.stat_type = *elem_type(stat.value_or(ir::DType::kFloat));
  if (const DeviceTensor* s = ctx.output(3); s != nullptr) {
    if (s->dtype != x->dtype || s->numel() != x->numel())
      return ctx.error("output 3 must have the input's type and shape");
    args.sum_out = s->data;
  }
  if (rows * h == 0) return no_op_launch();
  return Launch(
      [args](const LaunchEnv& env) { return check_launch(launch_layer_norm(args, env.stream)); });
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Softmax", 1, kLastOpset, softmax_fn, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "LogSoftmax", 1, kLastOpset, log_softmax_fn, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "LayerNormalization", 17, kLastOpset, layer_norm, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("com.microsoft", "SkipLayerNormalization", 1, 1, skip_layer_norm,
                       kFloatTypes);

}  // namespace xopt::cuda
