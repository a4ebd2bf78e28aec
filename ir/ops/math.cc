// Matrix products and per-axis math: Gemm, MatMul, Softmax/LogSoftmax/Hardmax, CumSum, TopK, Trilu.
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Status infer_gemm(InferenceContext& ctx) {
  return infer_gemm_like(ctx, ctx.opset() < 11);
}

Status infer_matmul(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  auto s = matmul_shape(ctx.input_shape(0), ctx.input_shape(1));
  if (!s.is_ok()) return ctx.error(s.status().message());
  ctx.set_output(0, ctx.input_dtype(0), std::move(s).value());
  return Status::ok();
}

// Softmax, LogSoftmax, Hardmax: before opset 13 the input is coerced to 2-D at `axis` (default 1);
// from 13 the op runs along `axis` (default -1). Either way the output has the input's shape.
Status infer_softmax(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank()) {
    int64_t r = static_cast<int64_t>(x.rank());
    int64_t axis = ctx.node().attr_int("axis", ctx.opset() >= 13 ? -1 : 1);
    if (r > 0 && (axis < -r || axis >= r))
      return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(r));
  }
  return infer_same_as_input(ctx);
}

Status infer_cumsum(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& axis = ctx.input_shape(1);
  if (axis.has_rank() && axis.rank() > 1)
    return ctx.error("axis must be a scalar, got " + str(axis));
  if (auto a = ctx.input_ints(1); a && ctx.input_shape(0).has_rank() && !a->empty()) {
    auto n = normalize_axis((*a)[0], static_cast<int64_t>(ctx.input_shape(0).rank()), "axis");
    if (!n.is_ok()) return ctx.error(n.status().message());
  }
  return infer_same_as_input(ctx);
}

Status infer_topk(InferenceContext& ctx) {
  const bool k_input = ctx.opset() >= 10;
  XOPT_RETURN_IF_ERROR(check_arity(ctx, k_input ? 2 : 1, k_input ? 2 : 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    ctx.set_output(1, DType::kInt64, Shape());
    return Status::ok();
  }
  auto axis =
      normalize_axis(ctx.node().attr_int("axis", -1), static_cast<int64_t>(x.rank()), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  Dim k;
  if (!k_input) {
    if (!ctx.node().has_attr("k")) return ctx.error("attribute k is missing");
    k = ctx.node().attr_int("k", 0);
  } else {
    const Shape& ks = ctx.input_shape(1);
    if (ks.is_static() && ks.numel() != 1)
      return ctx.error("K must hold one value, got " + str(ks));
    if (const SymData* d = ctx.input_data(1); d != nullptr && d->size() == 1) k = (*d)[0].to_dim();
    if (auto kv = ctx.input_ints(1); kv && kv->size() == 1 && (*kv)[0] < 0)
      return ctx.error("k must not be negative, got " + std::to_string((*kv)[0]));
  }
  if (k.is_known()) {
    const Dim& n = x[static_cast<size_t>(*axis)];
    if (n.is_known() && k.value > n.value)
      return ctx.error("k = " + std::to_string(k.value) + " exceeds the axis size " +
                       n.to_string());
  }
  std::vector<Dim> dims = x.dims();
  dims[static_cast<size_t>(*axis)] = k;
  ctx.set_output(0, t, Shape(dims));
  ctx.set_output(1, DType::kInt64, Shape(dims));
  return Status::ok();
}

Status infer_trilu(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 2));
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() < 2) return ctx.error("input must have rank >= 2, got " + str(x));
  return infer_same_as_input(ctx);
}

}  // namespace

Result<Shape> matmul_shape(const Shape& a, const Shape& b) {
  if (a.has_rank() && a.rank() == 0) return invalid_model("MatMul input A is a scalar");
  if (b.has_rank() && b.rank() == 0) return invalid_model("MatMul input B is a scalar");
  if (!a.has_rank() || !b.has_rank()) return Shape();
  std::vector<Dim> l = a.dims(), r = b.dims();
  if (l.size() == 1) l.insert(l.begin(), Dim(1));
  if (r.size() == 1) r.push_back(Dim(1));
  const Dim& k1 = l[l.size() - 1];
  const Dim& k2 = r[r.size() - 2];
  if (k1.is_known() && k2.is_known() && k1.value != k2.value)
    return invalid_model("inner dimensions differ: " + str(a) + " x " + str(b));
  Shape lb(std::vector<Dim>(l.begin(), l.end() - 2));
  Shape rb(std::vector<Dim>(r.begin(), r.end() - 2));
  auto batch = broadcast_shapes(lb, rb);
  if (!batch.is_ok())
    return invalid_model("batch dimensions of " + str(a) + " and " + str(b) + " do not broadcast");
  std::vector<Dim> out = batch->dims();
  if (a.rank() != 1) out.push_back(l[l.size() - 2]);
  if (b.rank() != 1) out.push_back(r[r.size() - 1]);
  return Shape(std::move(out));
}

Status infer_gemm_like(InferenceContext& ctx, bool c_required) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, c_required ? 3 : 2, 3));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (a.has_rank() && a.rank() != 2) return ctx.error("A must be 2-D, got " + str(a));
  if (b.has_rank() && b.rank() != 2) return ctx.error("B must be 2-D, got " + str(b));
  const bool ta = ctx.node().attr_int("transA", 0) != 0;
  const bool tb = ctx.node().attr_int("transB", 0) != 0;
  Dim m = a.has_rank() ? a[ta ? 1 : 0] : Dim();
  Dim ka = a.has_rank() ? a[ta ? 0 : 1] : Dim();
  Dim kb = b.has_rank() ? b[tb ? 1 : 0] : Dim();
  Dim n = b.has_rank() ? b[tb ? 0 : 1] : Dim();
  if (ka.is_known() && kb.is_known() && ka.value != kb.value)
    return ctx.error("inner dimensions differ: A " + str(a) + (ta ? "^T" : "") + " x B " + str(b) +
                     (tb ? "^T" : ""));
  Shape out({m, n});
  if (ctx.has_input(2) && ctx.opset() >= 7) {
    Status s = check_unidirectional(out, ctx.input_shape(2));
    if (!s) return ctx.error("C: " + s.message());
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return Status::ok();
}

void register_math_ops(OpList& ops) {
  // Gemm: C is required until opset 10 and optional from 11.
  ops.push_back(make_op("Gemm", 1, 10, infer_gemm));
  ops.push_back(make_op("Gemm", 11, kMaxOpset, infer_gemm));
  ops.push_back(make_op("MatMul", 1, kMaxOpset, infer_matmul));
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    ops.push_back(make_op(op, 1, 12, infer_softmax));
    ops.push_back(make_op(op, 13, kMaxOpset, infer_softmax));
  }
  ops.push_back(make_op("CumSum", 11, kMaxOpset, infer_cumsum));
  // TopK: k is an attribute until opset 9 and an input from 10.
  ops.push_back(make_op("TopK", 1, 9, infer_topk));
  ops.push_back(make_op("TopK", 10, kMaxOpset, infer_topk));
  ops.push_back(make_op("Trilu", 14, kMaxOpset, infer_trilu));
}

}  // namespace xopt::ir::ops
