// com.microsoft ops that the fusion passes emit, with onnxruntime's semantics (contrib_defs.cc,
// bert_defs.cc): FusedConv, FusedGemm, FusedMatMul, BiasGelu, FastGelu, Gelu, QuickGelu,
// SkipLayerNormalization, MultiHeadAttention.
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Status infer_fused_conv(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(infer_conv_like(ctx, 4));
  // Z (added before the activation) has the output's shape.
  if (ctx.has_input(3) && ctx.outputs()[0].shape.is_static() && ctx.input_shape(3).is_static() &&
      !(ctx.input_shape(3) == ctx.outputs()[0].shape))
    return ctx.error("Z " + str(ctx.input_shape(3)) + " differs from the output " +
                     str(ctx.outputs()[0].shape));
  return Status::ok();
}

Status infer_fused_gemm(InferenceContext& ctx) {
  return infer_gemm_like(ctx, false);
}

// FusedMatMul: MatMul with transA/transB (swap the last two dims) and transBatchA/transBatchB (the
// leading dim moves behind the batch dims: [b0, b1.., r, c] is read as [b1.., b0, c]).
Shape fused_operand(const Shape& s, bool trans, bool trans_batch) {
  if (!s.has_rank() || s.rank() == 1) return s;
  const auto& d = s.dims();
  const size_t r = d.size();
  std::vector<Dim> out;
  size_t start = trans_batch ? 1 : 0, end = trans_batch ? r - 1 : r - 2;
  for (size_t i = start; i < end; ++i) out.push_back(d[i]);
  size_t row = trans_batch ? 0 : r - 2, col = r - 1;
  out.push_back(d[trans ? col : row]);
  out.push_back(d[trans ? row : col]);
  return Shape(std::move(out));
}

Status infer_fused_matmul(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const Node& n = ctx.node();
  const bool tba = n.attr_int("transBatchA", 0) != 0, tbb = n.attr_int("transBatchB", 0) != 0;
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if ((tba || tbb) && a.has_rank() && b.has_rank() && (a.rank() != b.rank() || a.rank() < 3))
    return ctx.error("transBatchA/transBatchB need inputs of the same rank >= 3, got " + str(a) +
                     " and " + str(b));
  auto s = matmul_shape(fused_operand(a, n.attr_int("transA", 0) != 0, tba),
                        fused_operand(b, n.attr_int("transB", 0) != 0, tbb));
  if (!s.is_ok()) return ctx.error(s.status().message());
  ctx.set_output(0, ctx.input_dtype(0), std::move(s).value());
  return Status::ok();
}

Status infer_bias_gelu(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  Status s = check_unidirectional(ctx.input_shape(0), ctx.input_shape(1));
  if (!s) return ctx.error("bias: " + s.message());
  return infer_same_as_input(ctx);
}

Status infer_fast_gelu(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 2));
  if (ctx.has_input(1)) {
    XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
    Status s = check_unidirectional(ctx.input_shape(0), ctx.input_shape(1));
    if (!s) return ctx.error("bias: " + s.message());
  }
  return infer_same_as_input(ctx);
}

Status infer_skip_layer_norm(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 5));
  for (size_t i = 1; i < 5; ++i)
    if (ctx.has_input(i)) XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  if (x.has_rank()) {
    if (x.rank() < 2) return ctx.error("input must have rank >= 2, got " + str(x));
    const Dim& hidden = x.dims().back();
    Status s = check_unidirectional(x, ctx.input_shape(1));
    if (!s) return ctx.error("skip: " + s.message());
    for (size_t i = 2; i < 5; ++i) {
      const Shape& p = ctx.input_shape(i);
      if (!ctx.has_input(i) || !p.has_rank()) continue;
      if (p.rank() != 1 || (p[0].is_known() && hidden.is_known() && p[0].value != hidden.value))
        return ctx.error("input " + std::to_string(i) + " " + str(p) +
                         " must be 1-D of the hidden size " + hidden.to_string());
    }
  }
  ctx.set_output(0, t, x);
  Shape stats;
  if (x.has_rank()) {
    std::vector<Dim> d = x.dims();
    d.back() = Dim(1);
    stats = Shape(std::move(d));
  }
  ctx.set_output(1, DType::kFloat, stats);
  ctx.set_output(2, DType::kFloat, stats);
  ctx.set_output(3, t, x);
  return Status::ok();
}

Dim div_dim(const Dim& d, int64_t k) {
  if (d.is_known() && k > 0 && d.value % k == 0) return d.value / k;
  return Dim();
}

// Inputs: query, key, value, bias, key_padding_mask, attention_bias, past_key, past_value,
// past_sequence_length, cache_indirection. Outputs: output, present_key, present_value, qk.
Status infer_multi_head_attention(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 10));
  const int64_t heads = ctx.node().attr_int("num_heads", 0);
  if (heads <= 0) return ctx.error("attribute num_heads must be positive");
  DType t = ctx.input_dtype(0);
  const Shape& q = ctx.input_shape(0);
  const Shape& k = ctx.input_shape(1);
  const Shape& v = ctx.input_shape(2);
  if (!q.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  if (q.rank() != 3 && q.rank() != 5)
    return ctx.error("query must be 3-D (B,S,D) or 5-D packed QKV (B,S,N,3,H), got " + str(q));
  if (q.rank() == 5 && (ctx.has_input(1) || ctx.has_input(2)))
    return ctx.error("packed QKV query takes no key or value");
  if (q.rank() == 3 && !ctx.has_input(1))
    return ctx.error("key is required unless the query is packed QKV");
  const Dim& batch = q[0];
  const Dim& seq = q[1];
  Dim out_hidden, kv_seq, head_k, head_v;
  bool kv_bnsh = false;  // key/value given as (B, N, L, H): cross attention without past
  if (q.rank() == 5) {
    if (q[2].is_known() && q[2].value != heads)
      return ctx.error("packed QKV has " + q[2].to_string() + " heads, num_heads is " +
                       std::to_string(heads));
    if (q[3].is_known() && q[3].value != 3)
      return ctx.error("packed QKV needs 3 at dimension 3, got " + str(q));
    out_hidden = mul_dims(q[2], q[4]);
    kv_seq = seq;
    head_k = head_v = q[4];
  } else if (k.has_rank() && k.rank() == 5) {
    // Packed KV: (B, L, N, 2, H); the output keeps the query's hidden size.
    out_hidden = q[2];
    kv_seq = k[1];
    head_k = head_v = k[4];
  } else {
    if (k.has_rank() && k.rank() != 3 && k.rank() != 4)
      return ctx.error("key must be 3-D, 4-D or 5-D packed KV, got " + str(k));
    if (v.has_rank() && v.rank() != 3 && v.rank() != 4)
      return ctx.error("value must be 3-D or 4-D, got " + str(v));
    if (k.has_rank() && k.rank() == 3 && q[2].is_known() && k[2].is_known() &&
        q[2].value != k[2].value)
      return ctx.error("query hidden size " + q[2].to_string() + " differs from key's " +
                       k[2].to_string());
    if (k.has_rank()) {
      kv_bnsh = k.rank() == 4;
      kv_seq = kv_bnsh ? k[2] : k[1];
      head_k = kv_bnsh ? k[3] : div_dim(k[2], heads);
    }
    if (v.has_rank()) {
      out_hidden = v.rank() == 3 ? v[2] : mul_dims(v[1], v[3]);
      head_v = v.rank() == 3 ? div_dim(v[2], heads) : v[3];
    }
  }
  ctx.set_output(0, t, Shape({batch, seq, out_hidden}));
  if (ctx.num_outputs() > 1) {
    const Shape& past_k = ctx.input_shape(6);
    const Shape& past_v = ctx.input_shape(7);
    if (ctx.has_input(6) && past_k.has_rank() && past_k.rank() != 4)
      return ctx.error("past_key must be 4-D, got " + str(past_k));
    Shape pk, pv;
    if (ctx.has_input(6) && ctx.has_input(8)) {
      // past_sequence_length given: past and present share one max-length buffer.
      pk = past_k;
      pv = past_v;
    } else if (kv_bnsh && !ctx.has_input(6)) {
      pk = k;
      pv = v;
    } else {
      Dim total = kv_seq;
      if (ctx.has_input(6)) total = past_k.has_rank() ? add_dims(past_k[2], kv_seq) : Dim();
      pk = Shape({batch, Dim(heads), total, head_k});
      pv = Shape({batch, Dim(heads), total, head_v});
    }
    ctx.set_output(1, t, pk);
    ctx.set_output(2, t, pv);
  }
  return Status::ok();
}

void contrib(OpList& ops, const char* name, InferFn fn, bool elementwise = false) {
  ops.push_back(make_op(name, 1, 1, fn, (elementwise ? kPointwise : kNoFlags), kMsDomain));
}

}  // namespace

void register_contrib_ops(OpList& ops) {
  contrib(ops, "FusedConv", infer_fused_conv);
  contrib(ops, "FusedGemm", infer_fused_gemm);
  contrib(ops, "FusedMatMul", infer_fused_matmul);
  contrib(ops, "BiasGelu", infer_bias_gelu, true);
  contrib(ops, "FastGelu", infer_fast_gelu, true);
  contrib(ops, "Gelu", infer_same_as_input, true);
  contrib(ops, "QuickGelu", infer_same_as_input, true);  // x * sigmoid(alpha * x)
  contrib(ops, "SkipLayerNormalization", infer_skip_layer_norm);
  contrib(ops, "MultiHeadAttention", infer_multi_head_attention);
}

}  // namespace xopt::ir::ops
