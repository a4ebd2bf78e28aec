// Reduce* and ArgMax / ArgMin on the GPU, float32, float16 or bfloat16. Axes come from the
// attribute before ReduceSum-13 / the others' 18 and from a constant input after; with no axes
// every axis is reduced unless noop_with_empty_axes. Semantics follow
// executor/cpu/kernels/reduce.cc.
#include "executor/cuda/kernels/reduce.cuh"
#include "executor/cuda/kernels/compile_util.h"

namespace xopt::cuda {
namespace {

Result<Launch> reduce(CompileContext& ctx, ReduceOp op, int axes_input_since) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  XOPT_RETURN_IF_ERROR(same_type(ctx, x->dtype, {y}));
  const bool axes_from_input = ctx.opset() >= axes_input_since;
  const bool noop = axes_from_input && ctx.node().attr_int("noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (ctx.input(1) != nullptr) {
      XOPT_ASSIGN_OR_RETURN(axes, const_ints(ctx, 1, "axes"));
    }
  } else {
    axes = ctx.node().attr_ints("axes");
  }
  const size_t rank = x->rank();
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  for (int64_t a : axes) {
    XOPT_ASSIGN_OR_RETURN(int64_t n, fix_axis(ctx, a, static_cast<int64_t>(rank), "axes entry"));
    reduced[static_cast<size_t>(n)] = true;
  }
  // Merge the input dims into groups that are all reduced or all kept (size-1 dims dropped).
  std::vector<int64_t> gsize;
  std::vector<bool> gred;
  int64_t count = 1, n_out = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = x->dims[i];
    (reduced[i] ? count : n_out) *= d;
    if (d == 1) continue;
    if (!gsize.empty() && gred.back() == reduced[i]) {
      gsize.back() *= d;
    } else {
      gsize.push_back(d);
      gred.push_back(reduced[i]);
    }
  }
  if (y->numel() != n_out)
    return ctx.error("output has " + std::to_string(y->numel()) + " elements, expected " +
                     std::to_string(n_out));
  ReducePlan p;
  p.n_out = n_out;
  p.count = count;
  const auto gst = contiguous_strides(gsize);
  int reduced_groups = 0;
  for (size_t g = 0; g < gsize.size(); ++g) {
    if (p.red_rank == kMaxDims || p.kept_rank == kMaxDims)
      return ctx.unsupported("too many alternating reduced and kept dims");
    if (gred[g]) {
      ++reduced_groups;
      p.red_dims[p.red_rank] = gsize[g];
      p.red_strides[p.red_rank++] = gst[g];
    } else {
      p.kept_dims[p.kept_rank] = gsize[g];
      p.kept_strides[p.kept_rank++] = gst[g];
    }
  }
  // A trailing reduction (or nothing but reduced dims): contiguous rows.
  p.rows = gsize.empty() || (reduced_groups == 1 && gred.back());
  if (n_out == 0) return no_op_launch();
  const void* px = x->data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_reduce(op, et, px, py, p, env.stream));
  });
}

CompileFn reduce_fn(ReduceOp op, int axes_input_since) {
  return [op, axes_input_since](CompileContext& ctx) { return reduce(ctx, op, axes_input_since); };
}

Result<Launch> arg_extreme(CompileContext& ctx, bool is_max) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  if (y->dtype != ir::DType::kInt64) return ctx.error("output must be int64");
  XOPT_ASSIGN_OR_RETURN(
      int64_t axis, fix_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(x->rank())));
  const bool last = ctx.opset() >= 12 && ctx.node().attr_int("select_last_index", 0) != 0;
  const auto a = static_cast<size_t>(axis);
  const int64_t n = x->dims[a];
  const int64_t outer = dims_product(x->dims, 0, a), inner = dims_product(x->dims, a + 1);
  if (y->numel() != outer * inner) return ctx.error("output has the wrong element count");
  if (n == 0 && outer * inner > 0) return ctx.error("cannot take the arg-extreme of an empty axis");
  if (outer * inner == 0) return no_op_launch();
  const void* px = x->data;
  int64_t* py = y->as<int64_t>();
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_arg_extreme(et, px, py, outer, n, inner, is_max, last, env.stream));
  });
}

Result<Launch> arg_max(CompileContext& ctx) {
  return arg_extreme(ctx, true);
}
Result<Launch> arg_min(CompileContext& ctx) {
  return arg_extreme(ctx, false);
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "ReduceSum", 1, kLastOpset, reduce_fn(ReduceOp::kSum, 13), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceMean", 1, kLastOpset, reduce_fn(ReduceOp::kMean, 18),
                       kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceMax", 1, kLastOpset, reduce_fn(ReduceOp::kMax, 18), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceMin", 1, kLastOpset, reduce_fn(ReduceOp::kMin, 18), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceProd", 1, kLastOpset, reduce_fn(ReduceOp::kProd, 18),
                       kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceL1", 1, kLastOpset, reduce_fn(ReduceOp::kL1, 18), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceL2", 1, kLastOpset, reduce_fn(ReduceOp::kL2, 18), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceSumSquare", 1, kLastOpset, reduce_fn(ReduceOp::kSumSquare, 18),
                       kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceLogSum", 1, kLastOpset, reduce_fn(ReduceOp::kLogSum, 18),
                       kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ReduceLogSumExp", 1, kLastOpset, reduce_fn(ReduceOp::kLogSumExp, 18),
                       kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "ArgMax", 1, kLastOpset, arg_max, "float32, float16, bfloat16 -> int64");
XOPT_CUDA_KERNEL_TYPES("", "ArgMin", 1, kLastOpset, arg_min, "float32, float16, bfloat16 -> int64");

}  // namespace xopt::cuda
