// Recurrent-state sequence ops of opset 27: LinearAttention (update rules linear, gated, delta,
// gated_delta; grouped query heads; per-head or per-key decay; per-head or shared beta) and
// CausalConvWithState (depthwise causal 1-D convolution with a carried state, optional SiLU),
// following the ONNX reference step by step (the state in float32).
#include <cmath>
#include <string>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

double f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}

Status linear_attention(KernelContext& ctx) {
  const ir::Tensor* q = ctx.input(0);
  const ir::Tensor* k = ctx.input(1);
  const ir::Tensor* v = ctx.input(2);
  const ir::Tensor* past = ctx.input(3);
  const ir::Tensor* decay = ctx.input(4);
  const ir::Tensor* beta = ctx.input(5);
  if (q == nullptr || k == nullptr || v == nullptr)
    return ctx.error("query, key, value are required");
  const ir::Node& node = ctx.node();
  const std::string rule = node.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return ctx.error("unknown update_rule '" + rule + "'");
  const int64_t hq = node.attr_int("q_num_heads", 0), hkv = node.attr_int("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    return ctx.error("q_num_heads must be a positive multiple of kv_num_heads");
  const bool gating = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  if (gating != (decay != nullptr))
    return ctx.error("decay is required by, and only by, gated rules");
  if (delta != (beta != nullptr)) return ctx.error("beta is required by, and only by, delta rules");
  if (q->rank() != 3 || k->rank() != 3 || v->rank() != 3)
    return ctx.error("query, key and value must be [B, T, H*D]");
  const int64_t b = q->dims()[0], t = q->dims()[1];
  if (q->dims()[2] % hq || k->dims()[2] % hkv || v->dims()[2] % hkv)
    return ctx.error("hidden sizes are not divisible by the head counts");
  const int64_t dk = q->dims()[2] / hq, dv = v->dims()[2] / hkv;
  if (k->dims()[2] / hkv != dk) return ctx.error("query and key head sizes differ");
  const std::vector<double> qv = doubles(*q), kv = doubles(*k), vv = doubles(*v);
  int64_t decay_w = 0, beta_w = 0;
  std::vector<double> dvv, bvv;
  if (decay != nullptr) {
    decay_w = decay->rank() == 3 ? decay->dims()[2] : -1;
    if (decay_w != hkv && decay_w != hkv * dk)
      return ctx.error("decay must be [B, T, kv_num_heads] or [B, T, kv_num_heads * d_k]");
    dvv = doubles(*decay);
  }
  if (beta != nullptr) {
    beta_w = beta->rank() == 3 ? beta->dims()[2] : -1;
    if (beta_w != hkv && beta_w != 1) return ctx.error("beta must be [B, T, kv_num_heads or 1]");
    bvv = doubles(*beta);
  }
  std::vector<double> state(static_cast<size_t>(b * hkv * dk * dv), 0.0);
  if (past != nullptr) {
    if (past->dims() != std::vector<int64_t>{b, hkv, dk, dv})
      return ctx.error("past_state must be [B, kv_num_heads, d_k, d_v]");
    state = doubles(*past);
  }
  const double sc = node.attr_float("scale", 0.0f);
  const double scale = sc == 0.0 ? 1.0 / std::sqrt(static_cast<double>(dk)) : sc;
  const int64_t grp = hq / hkv;
  std::vector<double> out(static_cast<size_t>(b * t * hq * dv), 0.0);
  std::vector<double> vt(static_cast<size_t>(dv));
  for (int64_t i = 0; i < t; ++i)
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t h = 0; h < hkv; ++h) {
        double* s = state.data() + (bi * hkv + h) * dk * dv;
        const double* kt = kv.data() + ((bi * t + i) * hkv + h) * dk;
        for (int64_t m = 0; m < dv; ++m)
          vt[static_cast<size_t>(m)] = vv[static_cast<size_t>(((bi * t + i) * hkv + h) * dv + m)];
        if (gating) {
          for (int64_t d = 0; d < dk; ++d) {
            const double g = decay_w == hkv
                                 ? dvv[static_cast<size_t>((bi * t + i) * hkv + h)]
                                 : dvv[static_cast<size_t>(((bi * t + i) * hkv + h) * dk + d)];
            const double e = f32(std::exp(g));
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] = f32(s[d * dv + m] * e);
          }
        }
        if (delta) {
          const double bt = bvv[static_cast<size_t>((bi * t + i) * beta_w + (beta_w == 1 ? 0 : h))];
          for (int64_t m = 0; m < dv; ++m) {
            double r = 0.0;
            for (int64_t d = 0; d < dk; ++d) r += s[d * dv + m] * kt[d];
            vt[static_cast<size_t>(m)] = f32(bt * f32(vt[static_cast<size_t>(m)] - f32(r)));
          }
        }
        for (int64_t d = 0; d < dk; ++d)
          for (int64_t m = 0; m < dv; ++m)
            s[d * dv + m] = f32(s[d * dv + m] + f32(kt[d] * vt[static_cast<size_t>(m)]));
        for (int64_t g = 0; g < grp; ++g) {
          const int64_t qh = h * grp + g;
          const double* qt = qv.data() + ((bi * t + i) * hq + qh) * dk;
          for (int64_t m = 0; m < dv; ++m) {
            double acc = 0.0;
            for (int64_t d = 0; d < dk; ++d) acc += qt[d] * s[d * dv + m];
            out[static_cast<size_t>(((bi * t + i) * hq + qh) * dv + m)] = scale * f32(acc);
          }
        }
      }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(0, q->dtype(), {b, t, hq * dv}));
  XOPT_RETURN_IF_ERROR(store(out, o));
  if (ctx.wants_output(1)) {
    XOPT_ASSIGN_OR_RETURN(
        ir::Tensor * p,
        ctx.output_uninit(1, past != nullptr ? past->dtype() : q->dtype(), {b, hkv, dk, dv}));
    XOPT_RETURN_IF_ERROR(store(state, p));
  }
  return Status::ok();
}

// CausalConvWithState(input [B, C, L], weight [C, 1, K], bias [C], past_state [B, C, K-1]):
// output[c, l] = sum_j w[c, j] * padded[c, l + j] (+ bias), padded = past ++ input; SiLU when
// activation is silu / swish; present_state = the last K-1 columns of padded.
Status causal_conv_with_state(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* w = ctx.input(1);
  const ir::Tensor* bias = ctx.input(2);
  const ir::Tensor* past = ctx.input(3);
  if (x == nullptr || w == nullptr) return ctx.error("input and weight are required");
  const std::string act = ctx.node().attr_string("activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    return ctx.error("unknown activation '" + act + "'");
  if (x->rank() != 3 || w->rank() != 3) return ctx.error("input and weight must be 3-D");
  const int64_t b = x->dims()[0], c = x->dims()[1], l = x->dims()[2], kk = w->dims()[2];
  if (w->dims()[0] != c || w->dims()[1] != 1 || kk < 1)
    return ctx.error("weight must be [C, 1, K]");
  if (past != nullptr && past->dims() != std::vector<int64_t>{b, c, kk - 1})
    return ctx.error("past_state must be [B, C, K - 1]");
  if (bias != nullptr && bias->numel() != c) return ctx.error("bias must be [C]");
  const ir::DType dt = x->dtype();
  const std::vector<double> xv = doubles(*x), wv = doubles(*w);
  const std::vector<double> pv = past != nullptr ? doubles(*past) : std::vector<double>();
  const std::vector<double> bv = bias != nullptr ? doubles(*bias) : std::vector<double>();
  const int64_t pl = l + kk - 1;
  std::vector<double> y(static_cast<size_t>(b * c * l)), st(static_cast<size_t>(b * c * (kk - 1)));
  std::vector<double> padded(static_cast<size_t>(pl));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t j = 0; j < kk - 1; ++j)
        padded[static_cast<size_t>(j)] =
            past != nullptr ? pv[static_cast<size_t>((bi * c + ch) * (kk - 1) + j)] : 0.0;
      for (int64_t j = 0; j < l; ++j)
        padded[static_cast<size_t>(kk - 1 + j)] = xv[static_cast<size_t>((bi * c + ch) * l + j)];
      for (int64_t o = 0; o < l; ++o) {
        double acc = bias != nullptr ? bv[static_cast<size_t>(ch)] : 0.0;
        for (int64_t j = 0; j < kk; ++j)
          acc += wv[static_cast<size_t>(ch * kk + j)] * padded[static_cast<size_t>(o + j)];
        acc = round_to(dt, acc);
        if (act != "none") acc = acc / (1.0 + std::exp(-acc));
        y[static_cast<size_t>((bi * c + ch) * l + o)] = acc;
      }
      for (int64_t j = 0; j < kk - 1; ++j)
        st[static_cast<size_t>((bi * c + ch) * (kk - 1) + j)] =
            padded[static_cast<size_t>(pl - (kk - 1) + j)];
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(0, dt, {b, c, l}));
  XOPT_RETURN_IF_ERROR(store(y, o));
  if (ctx.wants_output(1)) {
    XOPT_ASSIGN_OR_RETURN(
        ir::Tensor * p, ctx.output_uninit(1, past != nullptr ? past->dtype() : dt, {b, c, kk - 1}));
    XOPT_RETURN_IF_ERROR(store(st, p));
  }
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "LinearAttention", 27, kLatest, linear_attention);
XOPT_CPU_KERNEL("", "CausalConvWithState", 27, kLatest, causal_conv_with_state);

}  // namespace xopt::exec::ops
