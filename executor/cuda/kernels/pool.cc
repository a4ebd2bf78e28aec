// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool, 1-D to 3-D, float32, float16 or
// bfloat16 (cuDNN's pooling with float alpha/beta for float32 and float16; bfloat16 always on the
// direct kernel, which sums in float).
//
// cuDNN pooling (cudnnPoolingForward) takes one symmetric pad per dim and no dilation, and its
// include-padding average divides by the whole window. That is exactly the CPU reference's
// semantics when the pads are symmetric, there is no dilation and every window ends inside the end
// padding (the output dims are the floor formula's). Everything else — SAME_UPPER/SAME_LOWER with
// an odd total pad, explicit asymmetric pads, dilations, ceil_mode adding a last window that runs
// past the padding — runs on a direct kernel (pool.cu) with the reference's rules. MaxPool's
// Indices output is not supported.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/kernels/conv_util.h"
#include "executor/cuda/kernels/pool.cuh"

namespace xopt::cuda {
namespace {

struct PoolState {
  CudnnDescriptors d;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
};

// Whether cuDNN's pooling computes exactly the reference for this window.
bool cudnn_expressible(const Window& w) {
  if (!w.symmetric()) return false;
  for (size_t i = 0; i < w.rank(); ++i) {
    if (w.dilations[i] != 1 || w.pads[i] >= w.kernel[i]) return false;
    const int64_t span = w.in[i] + 2 * w.pads[i] - w.kernel[i];
    if (span < 0 || span / w.strides[i] + 1 != w.out[i]) return false;
  }
  return true;
}

Result<Launch> compile_pool(CompileContext& ctx, const Window& w, bool is_max,
                            bool count_include_pad) {
  const DeviceTensor& x = *ctx.input(0);
  std::vector<int64_t> y_dims = {x.dims[0], x.dims[1]};
  y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
  XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 0, y_dims));
  const DeviceTensor& y = *ctx.output(0);
  if (y.numel() == 0) return Launch([](const LaunchEnv&) { return Status::ok(); });
  const size_t r = w.rank();
  if (r > 3) return ctx.unsupported(std::to_string(r) + "-D pooling (1-D to 3-D only)");
  const ir::DType dt = x.dtype;
  if (y.dtype != dt) return ctx.error("output type differs from the input's");
  const ElemType et = elem_of(dt);
  const void* xd = x.data;
  void* yd = y.data;

  // bfloat16 pools on the direct kernel: cuDNN's legacy pooling documents float, double, half and
  // the int8 types only.
  if (dt != ir::DType::kBFloat16 && cudnn_expressible(w)) {
    auto st = std::make_shared<PoolState>();
    std::vector<int64_t> xdims = x.dims, ydims = y_dims;
    std::vector<int> win = to_ints(w.kernel), pad, stride = to_ints(w.strides);
    for (size_t i = 0; i < r; ++i) pad.push_back(static_cast<int>(w.pads[i]));
    if (r == 1) {  // [N, C, W] as [N, C, 1, W]
      xdims.insert(xdims.begin() + 2, 1);
      ydims.insert(ydims.begin() + 2, 1);
      win.insert(win.begin(), 1);
      pad.insert(pad.begin(), 0);
      stride.insert(stride.begin(), 1);
    }
    XOPT_ASSIGN_OR_RETURN(st->x, st->d.tensor(xdims, cudnn_type(dt)));
    XOPT_ASSIGN_OR_RETURN(st->y, st->d.tensor(ydims, cudnn_type(dt)));
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreatePoolingDescriptor(&st->d.pool));
    const cudnnPoolingMode_t mode = is_max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                    : count_include_pad
                                        ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                        : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    // A window cuDNN refuses falls through to the direct kernel.
    std::vector<int> od(ydims.size());
    bool agree = cudnnSetPoolingNdDescriptor(st->d.pool, mode, CUDNN_NOT_PROPAGATE_NAN,
                                             static_cast<int>(win.size()), win.data(), pad.data(),
                                             stride.data()) == CUDNN_STATUS_SUCCESS &&
                 cudnnGetPoolingNdForwardOutputDim(st->d.pool, st->x, static_cast<int>(od.size()),
                                                   od.data()) == CUDNN_STATUS_SUCCESS;
    for (size_t i = 0; i < od.size(); ++i) agree = agree && od[i] == ydims[i];
    if (agree) {
      cudnnHandle_t h = ctx.handles().cudnn;
      return Launch([st, h, xd, yd](const LaunchEnv& env) -> Status {
        XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetStream(h, env.stream));
        const float one = 1.0f, zero = 0.0f;
        XOPT_CUDNN_RETURN_IF_ERROR(
            cudnnPoolingForward(h, st->d.pool, &one, st->x, xd, &zero, st->y, yd));
        return Status::ok();
      });
    }
  }
  PoolGeom g;
  g.rank = static_cast<int>(r);
  g.max = is_max;
  g.count_include_pad = count_include_pad;
  for (size_t i = 0; i < r; ++i) {
    g.in[i] = w.in[i];
    g.out[i] = w.out[i];
    g.kernel[i] = w.kernel[i];
    g.stride[i] = w.strides[i];
    g.dilation[i] = w.dilations[i];
    g.pad_begin[i] = w.pads[i];
    g.pad_end[i] = w.pads[i + r];
  }
  const int64_t nc = x.dims[0] * x.dims[1];
  return Launch([g, et, xd, yd, nc](const LaunchEnv& env) -> Status {
    return check_launch(launch_pool(et, xd, yd, nc, g, env.stream));
  });
}

Status check_input(const CompileContext& ctx) {
  if (ctx.input(0) == nullptr) return ctx.error("input X is required");
  XOPT_RETURN_IF_ERROR(require_float(ctx, {0}).status());
  if (ctx.input(0)->rank() < 3)
    return ctx.unsupported("input " + ir::dims_string(ctx.input(0)->dims) +
                           " without spatial dims (rank >= 3 only)");
  return Status::ok();
}

Result<Launch> windowed_pool(CompileContext& ctx, bool is_max) {
  XOPT_RETURN_IF_ERROR(check_input(ctx));
  const ir::Node& node = ctx.node();
  if (!node.has_attr("kernel_shape")) return ctx.error("kernel_shape attribute is required");
  if (is_max && ctx.num_outputs() > 1 && ctx.output(1) != nullptr)
    return ctx.unsupported("MaxPool's Indices output is not supported on the GPU");
  // dilations exist from MaxPool-10 and AveragePool-19.
  const bool dil = is_max ? ctx.opset() >= 10 : ctx.opset() >= 19;
  const bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  XOPT_ASSIGN_OR_RETURN(Window w, make_window(ctx, ctx.input(0)->dims, {}, ceil_mode, dil));
  return compile_pool(ctx, w, is_max, node.attr_int("count_include_pad", 0) != 0);
}

Result<Launch> global_pool(CompileContext& ctx, bool is_max) {
  XOPT_RETURN_IF_ERROR(check_input(ctx));
  const DeviceTensor& x = *ctx.input(0);
  Window w;
  w.in.assign(x.dims.begin() + 2, x.dims.end());
  w.kernel = w.in;
  const size_t r = w.rank();
  w.strides.assign(r, 1);
  w.dilations.assign(r, 1);
  w.pads.assign(2 * r, 0);
  w.out.assign(r, 1);
  for (int64_t d : w.in)
    if (d == 0) return ctx.unsupported("global pooling over an empty spatial dim");
  return compile_pool(ctx, w, is_max, false);
}

Result<Launch> max_pool(CompileContext& ctx) {
  return windowed_pool(ctx, true);
}
Result<Launch> average_pool(CompileContext& ctx) {
  return windowed_pool(ctx, false);
}
Result<Launch> global_max_pool(CompileContext& ctx) {
  return global_pool(ctx, true);
}
Result<Launch> global_average_pool(CompileContext& ctx) {
  return global_pool(ctx, false);
}

}  // namespace

// Registered up to the newest opset the CPU reference is checked against (nn_util.h kLatestOpset).
constexpr const char* kTypes = "float32, float16, bfloat16";
XOPT_CUDA_KERNEL_TYPES("", "MaxPool", 1, 28, max_pool, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "AveragePool", 1, 28, average_pool, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "GlobalMaxPool", 1, 28, global_max_pool, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "GlobalAveragePool", 1, 28, global_average_pool, kTypes);

}  // namespace xopt::cuda
