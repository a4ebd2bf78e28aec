// Transpose, Expand, Tile and Slice on the GPU: each is one strided copy whose plan (output dims
// and source strides) is fixed at compile time. Semantics follow executor/cpu/kernels/
// tensor_transpose.cc, tensor_expand_tile.cc and tensor_slice.cc; any element type of 1, 2, 4 or 8
// bytes moves bit-exactly.
#include <algorithm>

#include "executor/cuda/kernels/compile_util.h"
#include "executor/cuda/kernels/strided.cuh"

namespace xopt::cuda {
namespace {

constexpr const char* kTypes =
    "any 1/2/4/8-byte type (float32, float16, bfloat16, int32, int64, bool, ...)";

Result<size_t> element_size(const CompileContext& ctx, ir::DType t) {
  const size_t es = ir::dtype_size(t);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return ctx.unsupported("element type " + type_text(t) + " is not supported on the GPU");
  return es;
}

// The launch for y = x read through (view_dims, src_strides) starting `base` elements into x.
Result<Launch> strided_launch(const CompileContext& ctx, const DeviceTensor& x,
                              const DeviceTensor& y, const std::vector<int64_t>& view_dims,
                              const std::vector<int64_t>& src_strides, int64_t base = 0) {
  XOPT_ASSIGN_OR_RETURN(size_t es, element_size(ctx, x.dtype));
  if (y.dtype != x.dtype) return ctx.error("output type differs from the input's");
  IndexPlan p;
  if (!make_index_plan(view_dims, {src_strides}, &p))
    return ctx.unsupported("more than " + std::to_string(kMaxDims) + " dims after merging");
  if (p.numel != y.numel()) return ctx.error("output has the wrong element count");
  if (p.numel == 0) return no_op_launch();
  const void* src = static_cast<const char*>(x.data) + base * static_cast<int64_t>(es);
  void* dst = y.data;
  if (src == dst) {
    // An identity copy onto itself (the plan aliased them): nothing to move.
    bool identity = true;
    const auto st = contiguous_strides(view_dims);
    for (size_t i = 0; i < view_dims.size(); ++i)
      identity = identity && (view_dims[i] == 1 || st[i] == src_strides[i]);
    if (identity) return no_op_launch();
    return ctx.error("output aliases the input of a non-identity copy");
  }
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_strided_copy(src, dst, es, p, env.stream));
  });
}

Result<Launch> transpose(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  const size_t rank = x->rank();
  std::vector<int64_t> perm = ctx.node().attr_ints("perm");
  if (!ctx.node().has_attr("perm"))
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank) return ctx.error("perm does not match the input rank");
  std::vector<bool> seen(rank, false);
  for (int64_t& q : perm) {
    XOPT_ASSIGN_OR_RETURN(q, fix_axis(ctx, q, static_cast<int64_t>(rank), "perm entry"));
    if (seen[static_cast<size_t>(q)]) return ctx.error("perm repeats an axis");
    seen[static_cast<size_t>(q)] = true;
  }
  const auto in_st = contiguous_strides(x->dims);
  std::vector<int64_t> out(rank), st(rank);
  for (size_t i = 0; i < rank; ++i) {
    out[i] = x->dims[static_cast<size_t>(perm[i])];
    st[i] = in_st[static_cast<size_t>(perm[i])];
  }
  if (out != y->dims)
    return ctx.error("output dims " + ir::dims_string(y->dims) + " expected " +
                     ir::dims_string(out));
  return strided_launch(ctx, *x, *y, out, st);
}

// Expand: x broadcast to the output's (planned) dims.
Result<Launch> expand(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  bool ok = x->rank() <= y->rank();
  for (size_t i = 0; ok && i < x->rank(); ++i) {
    const int64_t d = x->dims[x->rank() - 1 - i], o = y->dims[y->rank() - 1 - i];
    ok = d == o || d == 1;
  }
  if (!ok)
    return ctx.error("input " + ir::dims_string(x->dims) + " does not broadcast to the output " +
                     ir::dims_string(y->dims));
  return strided_launch(ctx, *x, *y, y->dims, broadcast_strides_to(x->dims, y->dims));
}

// Tile: output dim d is repeats[d] * x.dims[d], read as dims [r0, d0, r1, d1, ...] with stride 0
// along every r. The repeats follow from the planned output dims.
Result<Launch> tile(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  if (x->rank() != y->rank()) return ctx.error("output rank differs from the input's");
  const auto st = contiguous_strides(x->dims);
  std::vector<int64_t> view, vst;
  for (size_t i = 0; i < x->rank(); ++i) {
    const int64_t d = x->dims[i], o = y->dims[i];
    int64_t r;
    if (d == 0) {
      r = 0;
      if (o != 0) return ctx.error("cannot tile an empty dim");
    } else {
      if (o % d != 0) return ctx.error("output dim is not a multiple of the input dim");
      r = o / d;
    }
    view.insert(view.end(), {r, d});
    vst.insert(vst.end(), {0, st[i]});
  }
  return strided_launch(ctx, *x, *y, view, vst);
}

// Slice: per axis, start, start + step, ... up to (excluding) end after numpy-style clamping.
Result<Launch> slice(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  std::vector<int64_t> starts, ends, axes, steps;
  bool axes_given;
  if (ctx.opset() < 10) {
    starts = ctx.node().attr_ints("starts");
    ends = ctx.node().attr_ints("ends");
    axes = ctx.node().attr_ints("axes");
    axes_given = ctx.node().has_attr("axes");
  } else {
    XOPT_ASSIGN_OR_RETURN(starts, const_ints(ctx, 1, "starts"));
    XOPT_ASSIGN_OR_RETURN(ends, const_ints(ctx, 2, "ends"));
    axes_given = ctx.input(3) != nullptr;
    if (axes_given) {
      XOPT_ASSIGN_OR_RETURN(axes, const_ints(ctx, 3, "axes"));
    }
    if (ctx.input(4) != nullptr) {
      XOPT_ASSIGN_OR_RETURN(steps, const_ints(ctx, 4, "steps"));
    }
  }
  const size_t rank = x->rank(), n = starts.size();
  if (!axes_given)
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    return ctx.error("starts, ends, axes and steps differ in length");
  std::vector<int64_t> out = x->dims;
  const auto in_st = contiguous_strides(x->dims);
  std::vector<int64_t> st = in_st;
  std::vector<bool> seen(rank, false);
  int64_t base = 0;
  for (size_t i = 0; i < n; ++i) {
    XOPT_ASSIGN_OR_RETURN(int64_t ax,
                          fix_axis(ctx, axes[i], static_cast<int64_t>(rank), "axes entry"));
    const auto a = static_cast<size_t>(ax);
    if (seen[a]) return ctx.error("axes repeat an axis");
    seen[a] = true;
    const int64_t dim = x->dims[a], step = steps[i];
    if (step == 0) return ctx.error("steps contain 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t count;
    if (dim == 0) {
      count = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? 1 + (end - start - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start <= end ? 0 : step < -dim ? 1 : 1 + (start - end - 1) / -step;
    }
    out[a] = count;
    if (count > 0) base += start * in_st[a];
    st[a] = in_st[a] * step;
  }
  if (out != y->dims)
    return ctx.error("output dims " + ir::dims_string(y->dims) + " expected " +
                     ir::dims_string(out));
  return strided_launch(ctx, *x, *y, out, st, base);
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Transpose", 1, kLastOpset, transpose, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Expand", 8, kLastOpset, expand, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Tile", 6, kLastOpset, tile, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Slice", 1, kLastOpset, slice, kTypes);

}  // namespace xopt::cuda
