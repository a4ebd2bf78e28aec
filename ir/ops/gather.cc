// Indexing ops: Gather, GatherElements, GatherND, ScatterND, ScatterElements (and legacy Scatter).
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Status infer_gather(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  DType t = ctx.input_dtype(0);
  if (!data.has_rank() || !idx.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  if (data.rank() == 0) return ctx.error("data must have rank >= 1");
  auto axis =
      normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(data.rank()), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  size_t a = static_cast<size_t>(*axis);
  const Dim& n = data[a];
  auto indices = ctx.input_ints(1);
  if (indices && n.is_known()) {
    for (int64_t i : *indices)
      if (i < -n.value || i >= n.value)
        return ctx.error("index " + std::to_string(i) + " is out of range for axis " +
                         std::to_string(a) + " of size " + n.to_string());
  }
  std::vector<Dim> out(data.dims().begin(), data.dims().begin() + *axis);
  out.insert(out.end(), idx.dims().begin(), idx.dims().end());
  out.insert(out.end(), data.dims().begin() + *axis + 1, data.dims().end());
  // Gathering from a 1-D data tensor (Shape(x)[i]) picks elements of the propagated data.
  if (data.rank() == 1 && idx.rank() <= 1 && indices) {
    if (const SymData* d = ctx.input_data(0)) {
      SymData picked;
      const int64_t size = static_cast<int64_t>(d->size());
      for (int64_t i : *indices) {
        int64_t k = i < 0 ? i + size : i;
        if (k < 0 || k >= size)
          return ctx.error("index " + std::to_string(i) + " is out of range for " +
                           std::to_string(size) + " elements");
        picked.push_back((*d)[static_cast<size_t>(k)]);
      }
      ctx.set_output_data(0, std::move(picked));
    }
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Status infer_gather_elements(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  if (data.has_rank() && idx.has_rank()) {
    if (data.rank() != idx.rank())
      return ctx.error("data " + str(data) + " and indices " + str(idx) + " differ in rank");
    auto axis =
        normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(data.rank()), "axis");
    if (!axis.is_ok()) return ctx.error(axis.status().message());
  }
  ctx.set_output(0, ctx.input_dtype(0), idx);
  return Status::ok();
}

Status infer_gather_nd(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  DType t = ctx.input_dtype(0);
  int64_t b = ctx.opset() >= 12 ? ctx.node().attr_int("batch_dims", 0) : 0;
  if (!data.has_rank() || !idx.has_rank() || idx.rank() == 0 || !idx.dims().back().is_known()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  int64_t r = static_cast<int64_t>(data.rank()), q = static_cast<int64_t>(idx.rank());
  int64_t last = idx.dims().back().value;
  if (b < 0 || b >= std::min(r, q))
    return ctx.error("batch_dims " + std::to_string(b) + " is out of range");
  if (last < 1 || last > r - b)
    return ctx.error("indices' last dimension " + std::to_string(last) + " must be in [1, " +
                     std::to_string(r - b) + "]");
  std::vector<Dim> out(idx.dims().begin(), idx.dims().end() - 1);
  out.insert(out.end(), data.dims().begin() + b + last, data.dims().end());
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Status infer_scatter(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 2));
  return infer_same_as_input(ctx);
}

}  // namespace

void register_gather_ops(OpList& ops) {
  ops.push_back(make_op("Gather", 1, kMaxOpset, infer_gather));
  ops.push_back(make_op("GatherElements", 11, kMaxOpset, infer_gather_elements));
  ops.push_back(make_op("GatherND", 11, kMaxOpset, infer_gather_nd));
  ops.push_back(make_op("ScatterND", 11, kMaxOpset, infer_scatter));
  ops.push_back(make_op("ScatterElements", 11, kMaxOpset, infer_scatter));
  ops.push_back(make_op("Scatter", 9, 10, infer_scatter));
}

}  // namespace xopt::ir::ops
