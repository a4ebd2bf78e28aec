// BatchNormalization (inference mode) as one kernel: y = scale * (x - mean) / sqrt(var + eps) + B
// per channel. Training mode (training_mode=1, or the running-statistics outputs requested before
// opset 14) is not supported on the GPU. Before opset 9, spatial=0 keeps per-activation statistics
// ([C, D1, ...] parameters), the same computation with C * D1 * ... channels.
#include <string>

#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/kernels/batchnorm.cuh"
#include "executor/cuda/kernels/conv_util.h"

namespace xopt::cuda {
namespace {

Result<Launch> batch_norm(CompileContext& ctx) {
  for (size_t i = 0; i < 5; ++i)
    if (ctx.input(i) == nullptr)
      return ctx.error("required input " + std::to_string(i) + " is missing");
  XOPT_ASSIGN_OR_RETURN(const ir::DType dt, require_float(ctx, {0, 1, 2, 3, 4}));
  const ElemType et = elem_of(dt);
  const ir::Node& node = ctx.node();
  const int64_t opset = ctx.opset();
  bool training = false;
  if (opset >= 14)
    training = node.attr_int("training_mode", 0) != 0;
  else if (opset <= 6)
    training = node.attr_int("is_test", 0) == 0 && node.num_outputs() > 1;
  else
    training = node.num_outputs() > 1;
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.output(i) != nullptr) training = true;
  if (training)
    return ctx.unsupported("training mode (batch statistics, running-mean outputs) is CPU only");
  const DeviceTensor& x = *ctx.input(0);
  if (x.rank() < 2)
    return ctx.error("X must have rank >= 2 ([N, C, ...]), got " + ir::dims_string(x.dims));
  XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 0, x.dims));
  const int64_t n = x.dims[0], c = x.dims[1], sp = product(x.dims, 2);
  const bool per_activation = opset < 9 && node.attr_int("spatial", 1) == 0;
  const int64_t ch = per_activation ? c * sp : c, inner = per_activation ? 1 : sp;
  for (size_t i = 1; i <= 4; ++i)
    if (ctx.input(i)->numel() != ch)
      return ctx.error("input " + std::to_string(i) + " has " +
                       std::to_string(ctx.input(i)->numel()) + " elements, expected " +
                       std::to_string(ch));
  const double eps = node.attr_float("epsilon", 1e-5f);
  const void* xd = x.data;
  void* yd = ctx.output(0)->data;
  const void* scale = ctx.input(1)->data;
  const void* bias = ctx.input(2)->data;
  const void* mean = ctx.input(3)->data;
  const void* var = ctx.input(4)->data;
  return Launch([=](const LaunchEnv& env) -> Status {
    return check_launch(
        launch_batch_norm(et, xd, yd, scale, bias, mean, var, eps, n, ch, inner, env.stream));
  });
}

}  // namespace

// Registered up to the newest opset the CPU reference is checked against (nn_util.h kLatestOpset).
XOPT_CUDA_KERNEL_TYPES("", "BatchNormalization", 1, 28, batch_norm, "float32, float16, bfloat16");

}  // namespace xopt::cuda
