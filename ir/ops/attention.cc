// Transformer ops of the standard domain: Attention (23-25), RotaryEmbedding, RMSNormalization,
// SwiGLU, LinearAttention and CausalConvWithState; ai.onnx.preview's FlexAttention
// (flex_attention.h).
#include "ir/ops/flex_attention.h"
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Dim div(const Dim& a, int64_t b) {
  return a.is_known() && b > 0 && a.value % b == 0 ? Dim(a.value / b) : Dim();
}

// Outputs: Y, present_key, present_value, qk_matmul_output.
Status infer_attention(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, ctx.opset() >= 24 ? 7 : 6));
  const Shape& q = ctx.input_shape(0);
  const Shape& k = ctx.input_shape(1);
  const Shape& v = ctx.input_shape(2);
  const DType t = ctx.input_dtype(0);
  if (!q.has_rank() || !k.has_rank() || !v.has_rank()) {
    for (size_t i = 0; i < 4; ++i) ctx.set_output(i, t, Shape());
    return Status::ok();
  }
  if ((q.rank() != 3 && q.rank() != 4) || k.rank() != q.rank() || v.rank() != q.rank())
    return ctx.error("Q, K and V must all be 3-D or all 4-D, got " + str(q) + ", " + str(k) + ", " +
                     str(v));
  Dim b = q[0], hq, hkv, s, l, d, dv;
  if (q.rank() == 3) {
    const int64_t nq = ctx.node().attr_int("q_num_heads", 0);
    const int64_t nkv = ctx.node().attr_int("kv_num_heads", 0);
    if (nq <= 0 || nkv <= 0) return ctx.error("3-D inputs need q_num_heads and kv_num_heads");
    hq = nq;
    hkv = nkv;
    s = q[1];
    l = k[1];
    d = div(q[2], nq);
    dv = div(v[2], nkv);
  } else {
    hq = q[1];
    hkv = k[1];
    s = q[2];
    l = k[2];
    d = q[3];
    dv = v[3];
  }
  Dim total = l;
  if (ctx.has_input(4)) {
    const Shape& pk = ctx.input_shape(4);
    total = pk.has_rank() && pk.rank() == 4 ? add_dims(pk[2], l) : Dim();
  }
  if (q.rank() == 3)
    ctx.set_output(0, t, Shape({b, s, mul_dims(hq, dv)}));
  else
    ctx.set_output(0, t, Shape({b, hq, s, dv}));
  ctx.set_output(1, t, Shape({b, hkv, total, d}));
  ctx.set_output(2, t, Shape({b, hkv, total, dv}));
  ctx.set_output(3, t, Shape({b, hq, s, total}));
  return Status::ok();
}

Status infer_rotary(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 4));
  return infer_same_as_input(ctx);
}

Status infer_rms_norm(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank()) {
    auto axis =
        normalize_axis(ctx.node().attr_int("axis", -1), static_cast<int64_t>(x.rank()), "axis");
    if (!axis.is_ok()) return ctx.error(axis.status().message());
  }
  return infer_same_as_input(ctx);
}

// SwiGLU(A, B) = A * sigmoid(alpha * A) * B: A and B of one shape, no broadcasting.
Status infer_swiglu(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (a.has_rank() && b.has_rank()) {
    bool same = a.rank() == b.rank();
    for (size_t i = 0; same && i < a.rank(); ++i)
      if (a[i].is_known() && b[i].is_known() && a[i].value != b[i].value) same = false;
    if (!same) return ctx.error("A " + str(a) + " and B " + str(b) + " differ in shape");
  }
  ctx.set_output(0, ctx.input_dtype(0), a.has_rank() ? a : b);
  return Status::ok();
}

// LinearAttention(query [B, T, Hq*Dk], key, value [B, T, Hkv*Dv], past_state, decay, beta):
// output [B, T, Hq*Dv], present_state [B, Hkv, Dk, Dv].
Status infer_linear_attention(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 6));
  const Shape& q = ctx.input_shape(0);
  const Shape& v = ctx.input_shape(2);
  const int64_t hq = ctx.node().attr_int("q_num_heads", 0);
  const int64_t hkv = ctx.node().attr_int("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0) return ctx.error("q_num_heads and kv_num_heads are required");
  const DType t = ctx.input_dtype(0);
  if (!q.has_rank() || !v.has_rank() || q.rank() != 3 || v.rank() != 3) {
    ctx.set_output(0, t, Shape({Dim(), Dim(), Dim()}));
    ctx.set_output(1, ctx.has_input(3) ? ctx.input_dtype(3) : t,
                   Shape({Dim(), Dim(hkv), Dim(), Dim()}));
    return Status::ok();
  }
  const Dim dv = div(v[2], hkv);
  ctx.set_output(0, t, Shape({q[0], q[1], mul_dims(Dim(hq), dv)}));
  ctx.set_output(1, ctx.has_input(3) ? ctx.input_dtype(3) : t,
                 Shape({q[0], Dim(hkv), div(q[2], hq), dv}));
  return Status::ok();
}

// CausalConvWithState(input [B, C, L], weight [C, 1, K], bias, past_state): output like input,
// present_state [B, C, K - 1].
Status infer_causal_conv(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 4));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const DType t = ctx.input_dtype(0);
  ctx.set_output(0, t, x);
  Dim k1 = w.has_rank() && w.rank() == 3 && w[2].is_known() ? Dim(w[2].value - 1) : Dim();
  if (x.has_rank() && x.rank() == 3)
    ctx.set_output(1, ctx.has_input(3) ? ctx.input_dtype(3) : t, Shape({x[0], x[1], k1}));
  else
    ctx.set_output(1, ctx.has_input(3) ? ctx.input_dtype(3) : t, Shape({Dim(), Dim(), k1}));
  return Status::ok();
}

}  // namespace

void register_attention_ops(OpList& ops) {
  ops.push_back(make_op("Attention", 23, 23, infer_attention));
  ops.push_back(make_op("Attention", 24, 24, infer_attention));
  ops.push_back(make_op("Attention", 25, kMaxOpset, infer_attention));
  ops.push_back(make_op("RotaryEmbedding", 23, kMaxOpset, infer_rotary));
  ops.push_back(make_op("RMSNormalization", 23, kMaxOpset, infer_rms_norm));
  ops.push_back(make_op("SwiGLU", 28, kMaxOpset, infer_swiglu));
  ops.push_back(make_op("LinearAttention", 27, kMaxOpset, infer_linear_attention));
  ops.push_back(make_op("CausalConvWithState", 27, kMaxOpset, infer_causal_conv));
  ops.push_back(
      make_op("FlexAttention", 1, kMaxOpset, infer_flex_attention, kNoFlags, kPreviewDomain));
}

}  // namespace xopt::ir::ops
