// Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout (inference) on the GPU: the bytes stay
// in order and only the dims change, which the plan already fixed. The plan usually makes the
// output a view of the input (the same pointer): then nothing is launched; otherwise one
// device-to-device copy. Any element type.
#include "executor/cuda/kernels/compile_util.h"

namespace xopt::cuda {
namespace {

Result<Launch> copy_launch(const CompileContext& ctx, const DeviceTensor& x,
                           const DeviceTensor& y) {
  if (x.numel() != y.numel() || x.dtype != y.dtype)
    return ctx.error("cannot give " + ir::dims_string(x.dims) + " the planned output " +
                     ir::dims_string(y.dims));
  const size_t bytes = x.nbytes();
  if (bytes == 0 || x.data == y.data) return no_op_launch();
  const void* src = x.data;
  void* dst = y.data;
  return Launch([=](const LaunchEnv& env) {
    return cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, env.stream),
                       "cudaMemcpyAsync");
  });
}

Result<Launch> view(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  return copy_launch(ctx, *x, *y);
}

// Dropout in inference: the identity, and an all-true mask when one is requested.
Result<Launch> dropout(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  if (ctx.opset() >= 12 && ctx.input(2) != nullptr) {
    const ir::Tensor* t = ctx.constant(2);
    if (t == nullptr || t->dtype() != ir::DType::kBool || t->numel() != 1)
      return ctx.unsupported("training_mode must be a constant bool on the GPU");
    if (t->data<bool>()[0]) return ctx.unsupported("Dropout in training mode on the GPU");
  }
  XOPT_ASSIGN_OR_RETURN(Launch copy, copy_launch(ctx, *x, *y));
  const DeviceTensor* mask = ctx.output(1);
  if (mask == nullptr || mask->numel() == 0) return copy;
  if (mask->dtype != ir::DType::kBool)
    return ctx.unsupported("a Dropout mask of type " + type_text(mask->dtype) + " on the GPU");
  void* pm = mask->data;
  const size_t n = mask->nbytes();
  return Launch([copy, pm, n](const LaunchEnv& env) -> Status {
    XOPT_RETURN_IF_ERROR(copy(env));
    return cuda_status(cudaMemsetAsync(pm, 1, n, env.stream), "cudaMemsetAsync");
  });
}

constexpr const char* kTypes = "any fixed-size type";

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Reshape", 1, kLastOpset, view, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Flatten", 1, kLastOpset, view, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Squeeze", 1, kLastOpset, view, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Unsqueeze", 1, kLastOpset, view, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Identity", 1, kLastOpset, view, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Dropout", 7, kLastOpset, dropout, kTypes);

}  // namespace xopt::cuda
