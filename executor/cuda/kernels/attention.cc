// com.microsoft MultiHeadAttention, float32, float16 or bfloat16, in the unpacked forms the
// fuse-attention pass emits and the CPU reference (executor/cpu/kernels/nn_contrib_attention.cc)
// runs:
//   query [B, S, D]; key [B, L, D] and value [B, L, Dv], or both already split into heads
//   ([B, N, L, H] / [B, N, L, Hv], then without bias); bias [D + D + Dv] (optional);
//   key_padding_mask int32 [B], [2B], [B, L] or [B, S, L]; attention_bias [B or 1, N or 1, S, L];
//   unidirectional, scale (default 1/sqrt(H)), mask_filter_value (default -10000).
//   Outputs: output [B, S, N*Hv]; present_key / present_value ([B, N, L, H/Hv]) when asked.
//
// Without present outputs and with head sizes up to planner::kAttentionFusedMaxHead
// (planner::attention_fused_applies, which the workspace model asks too), one fused kernel
// (launch_fused_attention, attention.cu): flash-attention style, Q/K/V read where they lie with the
// bias added on the fly, the masks applied per key tile, an online softmax, no score matrices and
// no workspace. This is the path for float16 and bfloat16 (loaded into float tiles, fp32 scores,
// softmax and accumulators, the output rounded once); a half-precision node the fused kernel does
// not cover (present outputs, head sizes above it) is refused with an error naming the node.
//
// Otherwise, per batch chunk (planner::attention_batch_chunk bounds the scratch), two
// strided-batched cuBLASLt products around one fused kernel:
//   scores [b, N, S, L] = scale * Q_h K_h^T      (cuBLASLt, batch b*N, in the workspace)
//   scores = softmax(scores + masks + attention_bias)   (attention.cu, in place)
//   output[b, :, n*Hv:(n+1)*Hv] = scores V_h       (cuBLASLt, straight into the output's layout)
// The heads are read where they lie (strides), except that a bias, or a present output that must
// hold the heads, first splits Q/K/V into [B, N, T, h] (with the bias added). Packed QKV/KV, past
// state and the qk output are not supported.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/kernels/attention.cuh"
#include "executor/cuda/kernels/conv_util.h"
#include "executor/cuda/kernels/gemm_lt.h"
#include "planner/workspace.h"

namespace xopt::cuda {
namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

// Where the heads of one of Q, K, V lie: head (b, n) is rows t of a [T, h] matrix at
// base + b * b_stride + n * n_stride with row stride `row`.
struct Heads {
  const float* base = nullptr;
  int64_t b_stride = 0, n_stride = 0, row = 0;
};

Heads raw_heads(const float* p, int64_t n, int64_t t, int64_t h) {  // [B, T, N*h]
  return {p, t * n * h, h, n * h};
}
Heads split_heads(const float* p, int64_t n, int64_t t, int64_t h) {  // [B, N, T, h]
  return {p, n * t * h, t * h, h};
}

// A product over the (b, n) pairs: one strided-batched call when every operand's b stride is N
// times its n stride (or B = 1), otherwise one call per b.
struct PairGemm {
  std::shared_ptr<LtGemm> gemm;
  int64_t calls = 1, a_b = 0, b_b = 0, y_b = 0;  // per-call offsets when calls = B

  Status run(const float* a, const float* b, float* y, void* ws, cudaStream_t stream) const {
    for (int64_t i = 0; i < calls; ++i)
      XOPT_RETURN_IF_ERROR(gemm->run(a + i * a_b, b + i * b_b, y + i * y_b, ws, stream));
    return Status::ok();
  }
};

// `s` holds m, n, k, the row/column strides, alpha; batch strides come from the (b, n) strides.
// `lt_cap`: the workspace left for cuBLASLt after the attention's own buffers.
Result<PairGemm> make_pair_gemm(const CompileContext& ctx, size_t lt_cap, LtGemmSpec s, int64_t nb,
                                int64_t nh, const float* a, int64_t a_bs, int64_t a_ns,
                                const float* b, int64_t b_bs, int64_t b_ns, const float* y,
                                int64_t y_bs, int64_t y_ns) {
  PairGemm pg;
  const bool one_call = nb == 1 || (a_bs == nh * a_ns && b_bs == nh * b_ns && y_bs == nh * y_ns);
  s.batch = one_call ? nb * nh : nh;
  s.a_bs = a_ns, s.b_bs = b_ns, s.y_bs = y_ns;
  if (s.batch == 1) s.a_bs = s.b_bs = s.y_bs = 0;
  // Alignment: the per-call offsets count too.
  auto with = [&](const float* p, int64_t off) {
    return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) |
                                         (one_call ? 0 : static_cast<uintptr_t>(off) * 4));
  };
  XOPT_ASSIGN_OR_RETURN(
      pg.gemm, LtGemm::create(ctx, s, with(a, a_bs), with(b, b_bs), with(y, y_bs), lt_cap));
  if (!one_call) pg.calls = nb, pg.a_b = a_bs, pg.b_b = b_bs, pg.y_b = y_bs;
  return pg;
}

Result<Launch> multi_head_attention(CompileContext& ctx) {
  const ir::Node& node = ctx.node();
  const DeviceTensor* q = ctx.input(0);
  const DeviceTensor* k = ctx.input(1);
  const DeviceTensor* v = ctx.input(2);
  const DeviceTensor* bias = ctx.input(3);
  const DeviceTensor* mask = ctx.input(4);
  const DeviceTensor* attn_bias = ctx.input(5);
  if (q == nullptr) return ctx.error("query is required");
  for (size_t i = 6; i < ctx.num_inputs(); ++i)
    if (ctx.input(i) != nullptr)
      return ctx.unsupported(
          "input " + std::to_string(i) +
          " (past_key/past_value/past_sequence_length/cache_indirection) is not supported");
  if (ctx.num_outputs() > 3 && ctx.output(3) != nullptr)
    return ctx.unsupported("the qk output is not supported");
  if (k == nullptr || v == nullptr || q->rank() != 3)
    return ctx.unsupported(
        "only separate query [B, S, D], key and value are supported (packed QKV/KV is not)");
  XOPT_ASSIGN_OR_RETURN(const ir::DType dt, require_float(ctx, {0, 1, 2, 3, 5}));
  const int64_t n = node.attr_int("num_heads", 0);
  if (n <= 0) return ctx.error("num_heads must be positive");
  const int64_t b = q->dims[0], s = q->dims[1], d = q->dims[2];
  if (d % n != 0)
    return ctx.error("query hidden size " + std::to_string(d) + " is not a multiple of num_heads");
  const int64_t h = d / n;
  int64_t l = 0, hv = 0;
  const bool kv4 = k->rank() == 4 && v->rank() == 4;
  if (k->rank() == 3 && v->rank() == 3) {
    if (k->dims[0] != b || k->dims[2] != d || v->dims[0] != b || v->dims[1] != k->dims[1] ||
        v->dims[2] % n != 0)
      return ctx.error("key " + ir::dims_string(k->dims) + " / value " + ir::dims_string(v->dims) +
                       " do not fit query " + ir::dims_string(q->dims));
    l = k->dims[1];
    hv = v->dims[2] / n;
  } else if (kv4) {
    if (k->dims[0] != b || k->dims[1] != n || k->dims[3] != h || v->dims[0] != b ||
        v->dims[1] != n || v->dims[2] != k->dims[2])
      return ctx.error("key " + ir::dims_string(k->dims) + " / value " + ir::dims_string(v->dims) +
                       " are not [B, N, L, H] for query " + ir::dims_string(q->dims));
    if (bias != nullptr) return ctx.unsupported("bias with key/value already split into heads");
    l = k->dims[2];
    hv = v->dims[3];
  } else {
    return ctx.unsupported("key " + ir::dims_string(k->dims) + " / value " +
                           ir::dims_string(v->dims) + " layout (packed or mixed ranks)");
  }
  if (bias != nullptr && bias->numel() != 2 * d + n * hv)
    return ctx.error("bias has " + std::to_string(bias->numel()) + " elements, expected " +
                     std::to_string(2 * d + n * hv));
  SoftmaxParams sp;
  sp.b = b, sp.n = n, sp.s = s, sp.l = l;
  if (attn_bias != nullptr) {
    const auto& ad = attn_bias->dims;
    if (ad.size() != 4 || (ad[0] != 1 && ad[0] != b) || (ad[1] != 1 && ad[1] != n) || ad[2] != s ||
        ad[3] != l)
      return ctx.error("attention_bias " + ir::dims_string(ad) + " is not [B or 1, N or 1, S, L]");
    sp.attn_bias = attn_bias->data;
    sp.ab_b = ad[0], sp.ab_n = ad[1];
  }
  if (mask != nullptr) {
    if (mask->dtype != ir::DType::kInt32) return ctx.error("key_padding_mask must be int32");
    const auto& md = mask->dims;
    if (md.size() == 1 && md[0] == b)
      sp.mask_kind = KeyMask::kLengths;
    else if (md.size() == 1 && md[0] == 2 * b)
      sp.mask_kind = KeyMask::kEndStart;
    else if (md.size() == 2 && md[0] == b && md[1] == l)
      sp.mask_kind = KeyMask::k2d;
    else if (md.size() == 3 && md[0] == b && md[1] == s && md[2] == l)
      sp.mask_kind = KeyMask::k3d;
    else
      return ctx.unsupported("key_padding_mask of shape " + ir::dims_string(md));
    sp.mask = mask->as<int32_t>();
  }
  sp.causal = node.attr_int("unidirectional", 0) != 0;
  sp.mask_filter = node.attr_float("mask_filter_value", -10000.0f);
  const float scale = node.has_attr("scale") && node.attr_float("scale", 0.0f) != 0.0f
                          ? node.attr_float("scale", 0.0f)
                          : static_cast<float>(1.0 / std::sqrt(static_cast<double>(h)));

  XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 0, {b, s, n * hv}));
  const DeviceTensor* present_k = ctx.num_outputs() > 1 ? ctx.output(1) : nullptr;
  const DeviceTensor* present_v = ctx.num_outputs() > 2 ? ctx.output(2) : nullptr;
  if (present_k != nullptr) XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 1, {b, n, l, h}));
  if (present_v != nullptr) XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 2, {b, n, l, hv}));
  static_assert(planner::kAttentionFusedMaxHead <= kFusedAttentionMaxHead,
                "the planner routes head sizes to the fused kernel that it does not take");
  if (ctx.output(0)->numel() == 0) return Launch([](const LaunchEnv&) { return Status::ok(); });
  const bool fused =
      planner::attention_fused_applies(h, hv, present_k != nullptr || present_v != nullptr);
  if (dt != ir::DType::kFloat && !fused)
    return ctx.unsupported(
        std::string(ir::dtype_name(dt)) +
        " attention runs on the fused kernel only (head sizes up to " +
        std::to_string(planner::kAttentionFusedMaxHead) +
        ", no present outputs); this node has head sizes " + std::to_string(h) + "/" +
        std::to_string(hv) +
        (present_k != nullptr || present_v != nullptr ? " and present outputs" : ""));
  if (fused) {
    const size_t es = ir::dtype_size(dt);
    const char* bb = bias != nullptr ? static_cast<const char*>(bias->data) : nullptr;
    const Heads qh = raw_heads(static_cast<const float*>(q->data), n, s, h);
    const Heads kh = kv4 ? split_heads(static_cast<const float*>(k->data), n, l, h)
                         : raw_heads(static_cast<const float*>(k->data), n, l, h);
    const Heads vh = kv4 ? split_heads(static_cast<const float*>(v->data), n, l, hv)
                         : raw_heads(static_cast<const float*>(v->data), n, l, hv);
    FusedAttentionParams fp;
    fp.type = elem_of(dt);
    fp.b = b, fp.n = n, fp.s = s, fp.l = l, fp.h = h, fp.hv = hv;
    fp.q = qh.base, fp.q_b = qh.b_stride, fp.q_n = qh.n_stride, fp.q_row = qh.row;
    fp.k = kh.base, fp.k_b = kh.b_stride, fp.k_n = kh.n_stride, fp.k_row = kh.row;
    fp.v = vh.base, fp.v_b = vh.b_stride, fp.v_n = vh.n_stride, fp.v_row = vh.row;
    if (bb != nullptr) fp.q_bias = bb, fp.k_bias = bb + d * es, fp.v_bias = bb + 2 * d * es;
    fp.y = ctx.output(0)->data;
    fp.scale = scale;
    fp.mask = sp;
    XOPT_CUDA_RETURN_IF_ERROR(prepare_fused_attention(fp));
    return Launch([fp](const LaunchEnv& env) -> Status {
      return check_launch(launch_fused_attention(fp, env.stream));
    });
  }
  float* yd = ctx.output(0)->as<float>();
  const float* bd = bias != nullptr ? bias->as<float>() : nullptr;

  // The batch runs in chunks of `bc` items (planner::attention_batch_chunk) so the scratch stays
  // bounded: workspace = [split Q] [split K] [split V] [output heads] scores [cuBLASLt] for one
  // chunk, each 256-byte aligned. Offsets are relative to env.workspace, known only when the launch
  // runs.
  // Heads are read where they lie when one strided-batched call can cover every (b, n) pair, i.e.
  // at batch 1; a larger batch splits Q, K and V into [b, N, T, h] and gathers the output from
  // [b, N, S, Hv] (one call per chunk instead of one per item).
  const bool batched = b > 1;
  const bool split_q = bd != nullptr || batched;
  const bool split_k = !kv4 && (bd != nullptr || present_k != nullptr || batched);
  const bool split_v = !kv4 && (bd != nullptr || present_v != nullptr || batched);
  const bool k_in_ws = split_k && present_k == nullptr;
  const bool v_in_ws = split_v && present_v == nullptr;
  const bool merge_out = batched;
  size_t per_item = static_cast<size_t>(n * s * l) * sizeof(float);
  if (split_q) per_item += static_cast<size_t>(n * s * h) * sizeof(float);
  if (k_in_ws) per_item += static_cast<size_t>(n * l * h) * sizeof(float);
  if (v_in_ws) per_item += static_cast<size_t>(n * l * hv) * sizeof(float);
  if (merge_out) per_item += static_cast<size_t>(n * s * hv) * sizeof(float);
  const int64_t bc = planner::attention_batch_chunk(b, per_item);
  const int64_t chunks = b / bc;
  size_t ws = 0;
  auto take = [&](int64_t elems) {
    const size_t at = ws;
    ws += align_up(static_cast<size_t>(elems) * sizeof(float));
    return at;
  };
  const size_t q_at = split_q ? take(bc * n * s * h) : 0;
  const size_t k_at = k_in_ws ? take(bc * n * l * h) : 0;
  const size_t v_at = v_in_ws ? take(bc * n * l * hv) : 0;
  const size_t o_at = merge_out ? take(bc * n * s * hv) : 0;
  const size_t scores_at = take(bc * n * s * l);
  const size_t lt_at = ws;
  // cuBLASLt gets what the plan's region leaves after our buffers (none: an algorithm without
  // workspace), so a plan sized for the buffers alone still runs.
  const size_t lt_cap = std::min(lt_workspace_cap(ctx),
                                 ctx.workspace_limit() - std::min(ctx.workspace_limit(), lt_at));

  // The GEMMs are planned against stand-in addresses for workspace buffers (offsets from 0:
  // their alignment is what matters; the region itself is 256-byte aligned).
  auto ws_ptr = [](size_t at) {
    return reinterpret_cast<const float*>(static_cast<uintptr_t>(kAlign + at));
  };
  const Heads qh =
      split_q ? split_heads(ws_ptr(q_at), n, s, h) : raw_heads(q->as<float>(), n, s, h);
  const Heads kh =
      kv4       ? split_heads(k->as<float>(), n, l, h)
      : split_k ? split_heads(present_k != nullptr ? present_k->as<float>() : ws_ptr(k_at), n, l, h)
                : raw_heads(k->as<float>(), n, l, h);
  const Heads vh =
      kv4 ? split_heads(v->as<float>(), n, l, hv)
      : split_v
          ? split_heads(present_v != nullptr ? present_v->as<float>() : ws_ptr(v_at), n, l, hv)
          : raw_heads(v->as<float>(), n, l, hv);
  // Elements from one chunk's operands to the next's: buffers in the workspace are per chunk.
  const int64_t q_step = split_q ? 0 : bc * qh.b_stride;
  const int64_t k_step = k_in_ws ? 0 : bc * kh.b_stride;
  const int64_t v_step = v_in_ws ? 0 : bc * vh.b_stride;
  const int64_t y_step = merge_out ? 0 : bc * s * n * hv;
  // The GEMMs are chosen for the first chunk's addresses; a later chunk's offset must keep them
  // as aligned.
  auto probe = [&](const float* p, int64_t step) {
    return reinterpret_cast<const float*>(
        reinterpret_cast<uintptr_t>(p) |
        (chunks > 1 ? static_cast<uintptr_t>(step) * sizeof(float) : 0));
  };

  // scores (S x L) = scale * Q_h (S x H) * K_h^T (H x L).
  LtGemmSpec s1;
  s1.m = s, s1.n = l, s1.k = h;
  s1.a_rs = qh.row, s1.a_cs = 1;
  s1.b_rs = 1, s1.b_cs = kh.row;  // K_h^T: element (h, l) at l * row + h
  s1.y_ld = l;
  s1.alpha = scale;
  XOPT_ASSIGN_OR_RETURN(
      PairGemm g1, make_pair_gemm(ctx, lt_cap, s1, bc, n, probe(qh.base, q_step), qh.b_stride,
                                  qh.n_stride, probe(kh.base, k_step), kh.b_stride, kh.n_stride,
                                  ws_ptr(scores_at), n * s * l, s * l));
  // output[b, s, n*Hv + j] (S x Hv, row stride N*Hv) = P (S x L) * V_h (L x Hv), or the same
  // into [b, N, S, Hv] in the workspace (merge_out), gathered into the output afterwards.
  LtGemmSpec s2;
  s2.m = s, s2.n = hv, s2.k = l;
  s2.a_rs = l, s2.a_cs = 1;
  s2.b_rs = vh.row, s2.b_cs = 1;
  s2.y_ld = merge_out ? hv : n * hv;
  const float* y_base = merge_out ? ws_ptr(o_at) : yd;
  XOPT_ASSIGN_OR_RETURN(
      PairGemm g2,
      make_pair_gemm(ctx, lt_cap, s2, bc, n, ws_ptr(scores_at), n * s * l, s * l,
                     probe(vh.base, v_step), vh.b_stride, vh.n_stride, probe(y_base, y_step),
                     merge_out ? n * s * hv : s * n * hv, merge_out ? s * hv : hv));
  const size_t lt_ws = std::max(g1.gemm->workspace(), g2.gemm->workspace());
  ctx.request_workspace(lt_at + lt_ws);

  const float* qd = q->as<float>();
  const float* kd = k->as<float>();
  const float* vd = v->as<float>();
  float* pk = present_k != nullptr ? present_k->as<float>() : nullptr;
  float* pv = present_v != nullptr ? present_v->as<float>() : nullptr;
  const size_t k_bytes = k->nbytes(), v_bytes = v->nbytes();
  const size_t need = lt_at + lt_ws;
  return Launch([=](const LaunchEnv& env) -> Status {
    if (env.workspace_bytes < need)
      return internal_error("MultiHeadAttention: workspace smaller than requested");
    char* w = static_cast<char*>(env.workspace);
    float* wq = reinterpret_cast<float*>(w + q_at);
    float* wk = pk != nullptr ? pk : reinterpret_cast<float*>(w + k_at);
    float* wv = pv != nullptr ? pv : reinterpret_cast<float*>(w + v_at);
    float* scores = reinterpret_cast<float*>(w + scores_at);
    float* wo = reinterpret_cast<float*>(w + o_at);
    if (kv4 && pk != nullptr)
      XOPT_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(pk, kd, k_bytes, cudaMemcpyDeviceToDevice, env.stream));
    if (kv4 && pv != nullptr)
      XOPT_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(pv, vd, v_bytes, cudaMemcpyDeviceToDevice, env.stream));
    void* lt_ws_ptr = w + lt_at;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t b0 = c * bc;
      // Split this chunk's heads: into the workspace, or straight into a present output.
      float* ck = k_in_ws ? wk : wk + b0 * n * l * h;
      float* cv = v_in_ws ? wv : wv + b0 * n * l * hv;
      if (split_q)
        XOPT_RETURN_IF_ERROR(
            check_launch(launch_split_heads(qd + b0 * s * d, bd, wq, bc, s, n, h, env.stream)));
      if (split_k)
        XOPT_RETURN_IF_ERROR(check_launch(launch_split_heads(
            kd + b0 * l * d, bd != nullptr ? bd + d : nullptr, ck, bc, l, n, h, env.stream)));
      if (split_v)
        XOPT_RETURN_IF_ERROR(check_launch(launch_split_heads(vd + b0 * l * n * hv,
                                                             bd != nullptr ? bd + 2 * d : nullptr,
                                                             cv, bc, l, n, hv, env.stream)));
      const float* qa = split_q ? wq : qd + b0 * qh.b_stride;
      const float* ka = kv4 ? kd + b0 * kh.b_stride : split_k ? ck : kd + b0 * kh.b_stride;
      const float* va = kv4 ? vd + b0 * vh.b_stride : split_v ? cv : vd + b0 * vh.b_stride;
      XOPT_RETURN_IF_ERROR(g1.run(qa, ka, scores, lt_ws_ptr, env.stream));
      SoftmaxParams cp = sp;
      cp.b0 = b0, cp.chunk = bc;
      XOPT_RETURN_IF_ERROR(check_launch(launch_attention_softmax(scores, cp, env.stream)));
      float* yc = yd + b0 * s * n * hv;
      XOPT_RETURN_IF_ERROR(g2.run(scores, va, merge_out ? wo : yc, lt_ws_ptr, env.stream));
      if (merge_out)
        XOPT_RETURN_IF_ERROR(check_launch(launch_merge_heads(wo, yc, bc, s, n, hv, env.stream)));
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("com.microsoft", "MultiHeadAttention", 1, 1, multi_head_attention,
                       "float32; float16, bfloat16 on the fused kernel (head size <= 128, no "
                       "present outputs)");

}  // namespace xopt::cuda
