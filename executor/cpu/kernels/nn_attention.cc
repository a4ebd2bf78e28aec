// Attention (ai.onnx opsets 23 and 24), following the ONNX reference implementation step by step:
//   Q [B, Hq, S, D] or [B, S, Hq*D] (q_num_heads), K [B, Hkv, L, D] or [B, L, Hkv*D], V likewise
//   with Dv; past_key / past_value [B, Hkv, P, D] are prepended along the sequence (present_key /
//   present_value outputs); attn_mask (bool: true attends; or additive, of Q's type) broadcasts to
//   [B, Hq, S, P+L] and is padded with -inf (false) when shorter than P+L; is_causal masks key j
//   for query i when j > i + offset (offset = P, or nonpad_kv_seqlen[b] - S, or 0);
//   nonpad_kv_seqlen (opset 24) masks keys at or past it; grouped queries share kv head h / (Hq /
//   Hkv). scores = (Q * sqrt(scale)) (K * sqrt(scale))^T (rounded to T as the reference does), then
//   softcap * tanh(scores / softcap) when softcap > 0, plus the bias; softmax in
//   softmax_precision (default T); a row whose bias is all -inf gives zeros. qk_matmul_output is
//   the (softcapped) scores for modes 0 and 1, the biased scores for 2, the probabilities for 3.
//   Opset 25 adds left_window_size / right_window_size (a sliding window at the causal offset).
#include <cmath>
#include <limits>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"
#include "executor/cpu/parallel.h"

namespace xopt::exec::ops {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Status attention(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const ir::Tensor* q = ctx.input(0);
  const ir::Tensor* k = ctx.input(1);
  const ir::Tensor* v = ctx.input(2);
  if (q == nullptr || k == nullptr || v == nullptr) return ctx.error("Q, K and V are required");
  const ir::Tensor* mask = ctx.input(3);
  const ir::Tensor* past_k = ctx.input(4);
  const ir::Tensor* past_v = ctx.input(5);
  const ir::Tensor* nonpad = ctx.input(6);
  if ((past_k == nullptr) != (past_v == nullptr))
    return ctx.error("past_key and past_value must be given together");
  if (nonpad != nullptr && past_k != nullptr)
    return ctx.error("nonpad_kv_seqlen cannot be combined with past_key/past_value");
  const ir::DType dt = q->dtype();
  if (k->dtype() != dt || v->dtype() != dt) return ctx.error("Q, K and V differ in type");
  const size_t rank = q->rank();
  if ((rank != 3 && rank != 4) || k->rank() != rank || v->rank() != rank)
    return ctx.error("Q, K and V must all be 3-D or all 4-D");
  const int64_t b = q->dims()[0];
  int64_t hq, hkv, s, l, d, dk, dv;
  if (rank == 3) {
    hq = node.attr_int("q_num_heads", 0);
    hkv = node.attr_int("kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0)
      return ctx.error("3-D inputs need positive q_num_heads and kv_num_heads");
    s = q->dims()[1];
    l = k->dims()[1];
    if (q->dims()[2] % hq || k->dims()[2] % hkv || v->dims()[2] % hkv)
      return ctx.error("hidden sizes are not divisible by the head counts");
    d = q->dims()[2] / hq;
    dk = k->dims()[2] / hkv;
    dv = v->dims()[2] / hkv;
    if (v->dims()[1] != l) return ctx.error("K and V differ in sequence length");
  } else {
    hq = q->dims()[1];
    hkv = k->dims()[1];
    s = q->dims()[2];
    l = k->dims()[2];
    d = q->dims()[3];
    dk = k->dims()[3];
    dv = v->dims()[3];
    if (v->dims()[1] != hkv || v->dims()[2] != l) return ctx.error("K and V shapes disagree");
  }
  if (dk != d) return ctx.error("Q and K head sizes differ");
  if (k->dims()[0] != b || v->dims()[0] != b) return ctx.error("batch sizes differ");
  if (hkv <= 0 || hq % hkv != 0)
    return ctx.error("q heads " + std::to_string(hq) + " are not a multiple of kv heads " +
                     std::to_string(hkv));
  int64_t p = 0;
  if (past_k != nullptr) {
    const auto& pk = past_k->dims();
    const auto& pv = past_v->dims();
    if (pk.size() != 4 || pv.size() != 4 || pk[0] != b || pk[1] != hkv || pk[3] != d ||
        pv[0] != b || pv[1] != hkv || pv[2] != pk[2] || pv[3] != dv)
      return ctx.error("past_key " + ir::dims_string(pk) + " / past_value " + ir::dims_string(pv) +
                       " do not match K and V");
    p = pk[2];
  }
  const int64_t t = p + l;  // total keys

  // Inputs as [B, H, len, h] doubles.
  auto heads = [&](const ir::Tensor& x, int64_t h, int64_t len, int64_t hs) {
    std::vector<double> src = doubles(x);
    if (x.rank() == 4) return src;
    std::vector<double> out(src.size());
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t ti = 0; ti < len; ++ti)
        for (int64_t hi = 0; hi < h; ++hi)
          for (int64_t e = 0; e < hs; ++e)
            out[static_cast<size_t>(((bi * h + hi) * len + ti) * hs + e)] =
                src[static_cast<size_t>(((bi * len + ti) * h + hi) * hs + e)];
    return out;
  };
  const std::vector<double> qh = heads(*q, hq, s, d);
  std::vector<double> kh = heads(*k, hkv, l, d), vh = heads(*v, hkv, l, dv);
  // present = concat(past, new) along the sequence.
  std::vector<double> pk_all(static_cast<size_t>(b * hkv * t * d));
  std::vector<double> pv_all(static_cast<size_t>(b * hkv * t * dv));
  {
    const std::vector<double> pkd = past_k ? doubles(*past_k) : std::vector<double>();
    const std::vector<double> pvd = past_v ? doubles(*past_v) : std::vector<double>();
    for (int64_t bh = 0; bh < b * hkv; ++bh) {
      for (int64_t j = 0; j < t; ++j) {
        for (int64_t e = 0; e < d; ++e)
          pk_all[static_cast<size_t>((bh * t + j) * d + e)] =
              j < p ? pkd[static_cast<size_t>((bh * p + j) * d + e)]
                    : kh[static_cast<size_t>((bh * l + j - p) * d + e)];
        for (int64_t e = 0; e < dv; ++e)
          pv_all[static_cast<size_t>((bh * t + j) * dv + e)] =
              j < p ? pvd[static_cast<size_t>((bh * p + j) * dv + e)]
                    : vh[static_cast<size_t>((bh * l + j - p) * dv + e)];
      }
    }
  }

  // The additive bias [B, Hq, S, T].
  const std::vector<int64_t> full = {b, hq, s, t};
  std::vector<double> bias(static_cast<size_t>(b * hq * s * t), 0.0);
  if (mask != nullptr) {
    std::vector<int64_t> md = mask->dims();
    if (md.empty()) return ctx.error("attn_mask must have rank >= 1");
    const int64_t ml = md.back();
    if (ml > t)
      return ctx.error("attn_mask's last dim " + std::to_string(ml) + " exceeds the " +
                       std::to_string(t) + " keys");
    std::vector<int64_t> target = full;
    target[3] = ml;
    if (!broadcasts_to(md, target))
      return ctx.error("attn_mask " + ir::dims_string(md) + " does not broadcast to " +
                       ir::dims_string(target));
    const bool is_bool = mask->dtype() == ir::DType::kBool;
    std::vector<double> mv = doubles(*mask);
    if (is_bool)
      for (double& x : mv) x = x != 0.0 ? 0.0 : kNegInf;
    const auto off = broadcast_offsets(md, target);
    for (int64_t r = 0; r < b * hq * s; ++r)
      for (int64_t j = 0; j < t; ++j)
        bias[static_cast<size_t>(r * t + j)] =
            j < ml ? mv[static_cast<size_t>(off[static_cast<size_t>(r * ml + j)])] : kNegInf;
  }
  std::vector<int64_t> nonpad_len;
  if (nonpad != nullptr) {
    nonpad_len = nonpad->to_int64_vector();
    if (static_cast<int64_t>(nonpad_len.size()) != b)
      return ctx.error("nonpad_kv_seqlen must have B = " + std::to_string(b) + " elements");
  }
  const bool causal = node.attr_int("is_causal", 0) != 0;
  // Opset 25's sliding window: query i attends keys within [i + offset - left, i + offset + right].
  const int64_t left = node.attr_int("left_window_size", -1);
  const int64_t right = node.attr_int("right_window_size", -1);
  if (left < -1 || right < -1) return ctx.error("window sizes must be -1 or non-negative");
  if (ctx.opset() >= 25 && rank == 4 &&
      (node.has_attr("q_num_heads") || node.has_attr("kv_num_heads")))
    return ctx.error("q_num_heads and kv_num_heads must not be given for 4-D inputs");
  for (int64_t bi = 0; bi < b; ++bi) {
    const int64_t offset = past_k != nullptr   ? p
                           : nonpad != nullptr ? nonpad_len[static_cast<size_t>(bi)] - s
                                               : 0;
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < t; ++j) {
          double& x = bias[static_cast<size_t>(((bi * hq + h) * s + i) * t + j)];
          if (causal && j > i + offset) x += kNegInf;
          if (nonpad != nullptr && j >= nonpad_len[static_cast<size_t>(bi)]) x += kNegInf;
          const int64_t diff = i + offset - j;
          if ((left >= 0 && diff > left) || (right >= 0 && -diff > right)) x += kNegInf;
        }
  }
  round_all(dt, bias);

  const bool has_scale = node.has_attr("scale");
  const double scale = has_scale ? node.attr_float("scale", 1.0f) : 1.0 / std::sqrt(double(d));
  const double sq = round_to(dt, std::sqrt(round_to(dt, scale)));
  const double softcap = node.attr_float("softcap", 0.0f);
  const int64_t mode = node.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return ctx.error("qk_matmul_output_mode must be 0..3");
  const ir::DType soft_t = node.has_attr("softmax_precision")
                               ? static_cast<ir::DType>(node.attr_int("softmax_precision", 1))
                               : dt;

  std::vector<double> y(static_cast<size_t>(b * hq * s * dv), 0.0);
  std::vector<double> qk_out(static_cast<size_t>(b * hq * s * t), 0.0);
  const int64_t rep = hq / hkv;
  parallel_for(b * hq, 1, [&](int64_t lo, int64_t hi) {
    std::vector<double> row(static_cast<size_t>(t)), qs(static_cast<size_t>(d));
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t bi = bh / hq, h = bh % hq, kvh = bi * hkv + h / rep;
      for (int64_t i = 0; i < s; ++i) {
        const double* qrow = qh.data() + (bh * s + i) * d;
        for (int64_t e = 0; e < d; ++e) qs[e] = round_to(dt, qrow[e] * sq);
        const double* brow = bias.data() + (bh * s + i) * t;
        double* orow = qk_out.data() + (bh * s + i) * t;
        bool all_masked = true;
        for (int64_t j = 0; j < t; ++j) {
          const double* krow = pk_all.data() + (kvh * t + j) * d;
          double acc = 0.0;
          for (int64_t e = 0; e < d; ++e) acc += qs[e] * round_to(dt, krow[e] * sq);
          acc = round_to(dt, acc);
          if (softcap > 0) acc = round_to(dt, round_to(dt, std::tanh(acc / softcap)) * softcap);
          if (mode <= 1) orow[j] = acc;
          row[j] = round_to(dt, acc + brow[j]);
          if (mode == 2) orow[j] = row[j];
          if (brow[j] != kNegInf) all_masked = false;
        }
        // Softmax in soft_t.
        for (int64_t j = 0; j < t; ++j) row[j] = round_to(soft_t, row[j]);
        double mx = kNegInf;
        for (int64_t j = 0; j < t; ++j) mx = std::max(mx, row[j]);
        if (mx == kNegInf) mx = 0.0;
        double sum = 0.0;
        for (int64_t j = 0; j < t; ++j) {
          row[j] = round_to(soft_t, std::exp(row[j] - mx));
          sum += row[j];
        }
        sum = round_to(soft_t, sum);
        if (sum == 0.0) sum = 1.0;
        for (int64_t j = 0; j < t; ++j) row[j] = all_masked ? 0.0 : round_to(soft_t, row[j] / sum);
        if (mode == 3)
          for (int64_t j = 0; j < t; ++j) orow[j] = row[j];
        for (int64_t j = 0; j < t; ++j) row[j] = round_to(dt, row[j]);
        double* yrow = y.data() + (bh * s + i) * dv;
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < t; ++j) acc += row[j] * pv_all[(kvh * t + j) * dv + e];
          yrow[e] = acc;
        }
      }
    }
  });

  std::vector<int64_t> ydims = {b, hq, s, dv};
  if (rank == 3) {
    std::vector<double> y3(y.size());
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t h = 0; h < hq; ++h)
        for (int64_t i = 0; i < s; ++i)
          for (int64_t e = 0; e < dv; ++e)
            y3[static_cast<size_t>(((bi * s + i) * hq + h) * dv + e)] =
                y[static_cast<size_t>(((bi * hq + h) * s + i) * dv + e)];
    y.swap(y3);
    ydims = {b, s, hq * dv};
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, dt, ydims));
  XOPT_RETURN_IF_ERROR(store(y, yt));
  if (ctx.wants_output(1)) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(1, dt, {b, hkv, t, d}));
    XOPT_RETURN_IF_ERROR(store(pk_all, o));
  }
  if (ctx.wants_output(2)) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(2, dt, {b, hkv, t, dv}));
    XOPT_RETURN_IF_ERROR(store(pv_all, o));
  }
  if (ctx.wants_output(3)) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(3, dt, full));
    XOPT_RETURN_IF_ERROR(store(qk_out, o));
  }
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "Attention", 23, kLatest, attention);

}  // namespace xopt::exec::ops
