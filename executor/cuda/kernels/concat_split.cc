// Concat and Split on the GPU: any element type of 1, 2, 4 or 8 bytes, bit-exact. Split sizes come
// from the `split` attribute (before 13) or a constant input (13+), else equal parts; num_outputs
// at 18+. Semantics follow executor/cpu/kernels/tensor_concat_split.cc.
#include <algorithm>

#include "executor/cuda/kernels/compile_util.h"
#include "executor/cuda/kernels/concat_split.cuh"

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

// Launches over parts (pointer, columns per row) of a joined [outer, row] tensor, kMaxParts at a
// time.
Launch parts_launch(bool concat, void* joined, int64_t outer, int64_t row,
                    const std::vector<std::pair<void*, int64_t>>& parts, size_t es) {
  std::vector<PartsPlan> plans;
  int64_t col = 0;
  for (size_t k = 0; k < parts.size(); k += kMaxParts) {
    PartsPlan p;
    p.outer = outer;
    p.row = row;
    p.col[0] = col;
    const size_t end = std::min(parts.size(), k + kMaxParts);
    for (size_t i = k; i < end; ++i) {
      p.ptr[p.parts] = parts[i].first;
      col += parts[i].second;
      p.col[++p.parts] = col;
    }
    if (p.col[p.parts] > p.col[0]) plans.push_back(p);
  }
  return [concat, joined, plans, es](const LaunchEnv& env) -> Status {
    for (const PartsPlan& p : plans) {
      const cudaError_t e = concat ? launch_concat(joined, p, es, env.stream)
                                   : launch_split(joined, p, es, env.stream);
      XOPT_RETURN_IF_ERROR(check_launch(e));
    }
    return Status::ok();
  };
}

Result<Launch> concat(CompileContext& ctx) {
  std::vector<const DeviceTensor*> xs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.input(i) != nullptr) xs.push_back(ctx.input(i));
  if (xs.empty()) return ctx.error("needs at least one input");
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  const DeviceTensor& first = *xs[0];
  XOPT_ASSIGN_OR_RETURN(size_t es, element_size(ctx, first.dtype));
  const auto rank = static_cast<int64_t>(first.rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, fix_axis(ctx, ctx.node().attr_int("axis", 1), rank));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> out = first.dims;
  out[a] = 0;
  const int64_t inner = dims_product(first.dims, a + 1);
  std::vector<std::pair<void*, int64_t>> parts;
  for (const DeviceTensor* x : xs) {
    bool same = x->rank() == first.rank() && x->dtype == first.dtype;
    for (size_t i = 0; same && i < x->rank(); ++i) same = i == a || x->dims[i] == first.dims[i];
    if (!same)
      return ctx.error("input " + ir::dims_string(x->dims) + " does not match " +
                       ir::dims_string(first.dims) + " outside the axis");
    out[a] += x->dims[a];
    parts.emplace_back(x->data, x->dims[a] * inner);
  }
  if (out != y->dims || y->dtype != first.dtype)
    return ctx.error("output dims " + ir::dims_string(y->dims) + " expected " +
                     ir::dims_string(out));
  const int64_t outer = dims_product(out, 0, a);
  if (y->numel() == 0) return no_op_launch();
  return parts_launch(true, y->data, outer, out[a] * inner, parts, es);
}

// The chunk sizes along the axis (see executor/cpu/kernels/tensor_concat_split.cc).
Result<std::vector<int64_t>> split_sizes(const CompileContext& ctx, int64_t dim, int64_t n) {
  std::vector<int64_t> split;
  if (ctx.opset() >= 13 || (ctx.opset() < 2 && ctx.input(1) != nullptr)) {
    if (ctx.input(1) != nullptr) {
      XOPT_ASSIGN_OR_RETURN(split, const_ints(ctx, 1, "split"));
    }
  } else {
    split = ctx.node().attr_ints("split");
  }
  if (!split.empty()) {
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return ctx.error("split has a negative size");
      sum += s;
    }
    if (sum != dim || static_cast<int64_t>(split.size()) != n)
      return ctx.error("split " + ir::dims_string(split) + " does not cover a dim of " +
                       std::to_string(dim) + " with " + std::to_string(n) + " outputs");
    return split;
  }
  int64_t parts = n;
  if (ctx.opset() >= 18 && ctx.node().has_attr("num_outputs")) {
    parts = ctx.node().attr_int("num_outputs", n);
    if (parts != n) return ctx.error("num_outputs differs from the number of outputs");
  }
  if (parts <= 0) return ctx.error("has no outputs");
  if (dim % parts == 0) return std::vector<int64_t>(static_cast<size_t>(parts), dim / parts);
  if (ctx.opset() < 18)
    return ctx.error("cannot split a dim of " + std::to_string(dim) + " into " +
                     std::to_string(parts) + " equal parts");
  const int64_t chunk = dim / parts + 1;
  std::vector<int64_t> sizes(static_cast<size_t>(parts));
  for (int64_t k = 0; k < parts; ++k)
    sizes[static_cast<size_t>(k)] = std::clamp<int64_t>(dim - k * chunk, 0, chunk);
  return sizes;
}

Result<Launch> split(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(size_t es, element_size(ctx, x->dtype));
  const auto rank = static_cast<int64_t>(x->rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, fix_axis(ctx, ctx.node().attr_int("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  const auto n = static_cast<int64_t>(ctx.num_outputs());
  XOPT_ASSIGN_OR_RETURN(auto sizes, split_sizes(ctx, x->dims[a], n));
  const int64_t inner = dims_product(x->dims, a + 1);
  std::vector<std::pair<void*, int64_t>> parts;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const DeviceTensor* y = ctx.output(k);
    std::vector<int64_t> dims = x->dims;
    dims[a] = sizes[k];
    if (y == nullptr) {
      // An omitted output still owns its columns; nothing is written for it.
      parts.emplace_back(nullptr, 0);
      if (sizes[k] != 0)
        return ctx.unsupported("an omitted Split output with elements is not supported");
      continue;
    }
    if (y->dims != dims || y->dtype != x->dtype)
      return ctx.error("output " + std::to_string(k) + " dims " + ir::dims_string(y->dims) +
                       " expected " + ir::dims_string(dims));
    parts.emplace_back(y->data, sizes[k] * inner);
  }
  if (x->numel() == 0) return no_op_launch();
  return parts_launch(false, x->data, dims_product(x->dims, 0, a), x->dims[a] * inner, parts, es);
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Concat", 4, kLastOpset, concat, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Split", 2, kLastOpset, split, kTypes);

}  // namespace xopt::cuda
