// Gather (any axis) and GatherElements on the GPU. The indices are a device tensor (int32 or int64,
// constant or computed at run time) read by the kernel. Semantics follow
// executor/cpu/kernels/tensor_gather.cc, except that an out-of-range index is clamped instead of
// rejected (the GPU cannot report it without a synchronization).
#include "executor/cuda/kernels/gather.cuh"
#include "executor/cuda/kernels/compile_util.h"

namespace xopt::cuda {
namespace {

constexpr const char* kTypes = "any 1/2/4/8-byte data type; indices int32, int64";

Result<size_t> element_size(const CompileContext& ctx, ir::DType t) {
  const size_t es = ir::dtype_size(t);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return ctx.unsupported("element type " + type_text(t) + " is not supported on the GPU");
  return es;
}

Result<bool> indices_int64(const CompileContext& ctx, const DeviceTensor& ind) {
  if (ind.dtype == ir::DType::kInt64) return true;
  if (ind.dtype == ir::DType::kInt32) return false;
  return ctx.error("indices must be int32 or int64, got " + type_text(ind.dtype));
}

Result<Launch> gather(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* ind, need_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(size_t es, element_size(ctx, x->dtype));
  XOPT_ASSIGN_OR_RETURN(bool i64, indices_int64(ctx, *ind));
  XOPT_ASSIGN_OR_RETURN(
      int64_t axis, fix_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(x->rank())));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> out(x->dims.begin(), x->dims.begin() + axis);
  out.insert(out.end(), ind->dims.begin(), ind->dims.end());
  out.insert(out.end(), x->dims.begin() + axis + 1, x->dims.end());
  if (out != y->dims || y->dtype != x->dtype)
    return ctx.error("output dims " + ir::dims_string(y->dims) + " expected " +
                     ir::dims_string(out));
  GatherPlan p;
  p.outer = dims_product(x->dims, 0, a);
  p.dim = x->dims[a];
  p.n_idx = ind->numel();
  p.inner = dims_product(x->dims, a + 1);
  if (y->numel() == 0) return no_op_launch();
  if (p.dim == 0) return ctx.error("cannot gather from an empty axis");
  const void* px = x->data;
  const void* pi = ind->data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_gather(px, pi, i64, py, es, p, env.stream));
  });
}

Result<Launch> gather_elements(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* ind, need_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(size_t es, element_size(ctx, x->dtype));
  XOPT_ASSIGN_OR_RETURN(bool i64, indices_int64(ctx, *ind));
  const size_t rank = x->rank();
  XOPT_ASSIGN_OR_RETURN(int64_t axis,
                        fix_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(rank)));
  if (ind->rank() != rank) return ctx.error("indices and data differ in rank");
  for (size_t i = 0; i < rank; ++i)
    if (static_cast<int64_t>(i) != axis && ind->dims[i] > x->dims[i])
      return ctx.error("indices " + ir::dims_string(ind->dims) + " exceed data " +
                       ir::dims_string(x->dims) + " outside the axis");
  if (y->dims != ind->dims || y->dtype != x->dtype)
    return ctx.error("output must have the indices' dims and the data's type");
  const auto a = static_cast<size_t>(axis);
  auto xs = contiguous_strides(x->dims);
  const int64_t axis_stride = xs[a];
  xs[a] = 0;
  IndexPlan p;
  if (!make_index_plan(ind->dims, {xs, contiguous_strides(ind->dims)}, &p))
    return ctx.unsupported("more than " + std::to_string(kMaxDims) + " dims after merging");
  if (p.numel == 0) return no_op_launch();
  const int64_t dim = x->dims[a];
  if (dim == 0) return ctx.error("cannot gather from an empty axis");
  const void* px = x->data;
  const void* pi = ind->data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(
        launch_gather_elements(px, pi, i64, py, es, p, dim, axis_stride, env.stream));
  });
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Gather", 1, kLastOpset, gather, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "GatherElements", 11, kLastOpset, gather_elements, kTypes);

}  // namespace xopt::cuda
