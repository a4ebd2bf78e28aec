// com.microsoft MultiHeadAttention with onnxruntime's CPU semantics, for the unpacked forms:
//   query [B, S, D]; key [B, L, D] and value [B, L, Dv] (or both already split into heads,
//   [B, N, L, H] / [B, N, L, Hv], then without bias); bias [D + D + Dv] (optional);
//   key_padding_mask int32 [B] (valid lengths), [2B] (end and start positions), [B, L] or [B, S, L]
//   (1 = keep); attention_bias [B or 1, N or 1, S, L] added to the scores; unidirectional=1 masks
//   keys after the query position; scale (default 1/sqrt(H)), mask_filter_value (default -10000).
// A query whose every key is masked with -inf (attention_bias) attends to nothing: zeros, not the
// NaN a plain softmax gives (torch's SDPA export guards its softmax the same way).
// Outputs: output [B, S, N*Hv]; present_key [B, N, L, H] and present_value [B, N, L, Hv] if asked.
// Packed QKV / packed KV, past_key/past_value, cache_indirection and the qk output are rejected
// as unsupported.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/gemm.h"
#include "executor/cpu/kernels/nn_util.h"
#include "executor/cpu/parallel.h"

namespace xopt::exec::nn {
namespace {

// Copies a [B, T, N*h] tensor (plus bias slice) into [B, N, T, h] compute-type storage; a 4-D
// input is taken as already [B, N, T, h].
template <typename T, typename C>
std::vector<C> to_heads(const ir::Tensor& t, int64_t b, int64_t n, int64_t len, int64_t h,
                        const T* bias) {
  std::vector<C> out(static_cast<size_t>(b * n * len * h));
  const T* d = t.data<T>();
  if (t.rank() == 4) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<C>(to_compute(d[i]));
    return out;
  }
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t ti = 0; ti < len; ++ti)
      for (int64_t ni = 0; ni < n; ++ni)
        for (int64_t hi = 0; hi < h; ++hi) {
          C v = static_cast<C>(to_compute(d[((bi * len + ti) * n + ni) * h + hi]));
          if (bias != nullptr) v += static_cast<C>(to_compute(bias[ni * h + hi]));
          out[((bi * n + ni) * len + ti) * h + hi] = v;
        }
  return out;
}

Status multi_head_attention(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0}));
  const ir::Node& node = ctx.node();
  const ir::Tensor& q = *ctx.input(0);
  const ir::Tensor* k = ctx.input(1);
  const ir::Tensor* v = ctx.input(2);
  const ir::Tensor* bias = ctx.input(3);
  const ir::Tensor* mask = ctx.input(4);
  const ir::Tensor* attn_bias = ctx.input(5);
  for (size_t i = 6; i < ctx.num_inputs(); ++i)
    if (ctx.input(i) != nullptr)
      return ctx.unsupported(
          "input " + std::to_string(i) +
          " (past_key/past_value/past_sequence_length/cache_indirection) is not supported");
  if (ctx.num_outputs() > 3 && ctx.wants_output(3))
    return ctx.unsupported("the qk output is not supported");
  if (k == nullptr || v == nullptr || q.rank() != 3)
    return ctx.unsupported(
        "only separate query [B, S, D], key and value are supported (packed QKV/KV is not)");
  const int64_t n = node.attr_int("num_heads", 0);
  if (n <= 0) return ctx.error("num_heads must be positive");
  const int64_t b = q.dims()[0], s = q.dims()[1], d = q.dims()[2];
  if (d % n != 0)
    return ctx.error("query hidden size " + std::to_string(d) + " is not a multiple of num_heads");
  const int64_t h = d / n;
  int64_t l = 0, hv = 0;
  if (k->rank() == 3 && v->rank() == 3) {
    if (k->dims()[0] != b || k->dims()[2] != d || v->dims()[0] != b ||
        v->dims()[1] != k->dims()[1] || v->dims()[2] % n != 0)
      return ctx.error("key " + ir::dims_string(k->dims()) + " / value " +
                       ir::dims_string(v->dims()) + " do not fit query " +
                       ir::dims_string(q.dims()));
    l = k->dims()[1];
    hv = v->dims()[2] / n;
  } else if (k->rank() == 4 && v->rank() == 4) {
    if (k->dims()[0] != b || k->dims()[1] != n || k->dims()[3] != h || v->dims()[0] != b ||
        v->dims()[1] != n || v->dims()[2] != k->dims()[2])
      return ctx.error("key " + ir::dims_string(k->dims()) + " / value " +
                       ir::dims_string(v->dims()) + " are not [B, N, L, H] for query " +
                       ir::dims_string(q.dims()));
    if (bias != nullptr) return ctx.unsupported("bias with key/value already split into heads");
    l = k->dims()[2];
    hv = v->dims()[3];
  } else {
    return ctx.unsupported("key " + ir::dims_string(k->dims()) + " / value " +
                           ir::dims_string(v->dims()) + " layout (packed or mixed ranks)");
  }
  if (k->dtype() != q.dtype() || v->dtype() != q.dtype() ||
      (bias != nullptr && bias->dtype() != q.dtype()) ||
      (attn_bias != nullptr && attn_bias->dtype() != q.dtype()))
    return ctx.error("query, key, value, bias and attention_bias must have the same element type");
  if (bias != nullptr && bias->numel() != 2 * d + n * hv)
    return ctx.error("bias has " + std::to_string(bias->numel()) + " elements, expected " +
                     std::to_string(2 * d + n * hv));
  if (attn_bias != nullptr) {
    const auto& ad = attn_bias->dims();
    if (ad.size() != 4 || (ad[0] != 1 && ad[0] != b) || (ad[1] != 1 && ad[1] != n) || ad[2] != s ||
        ad[3] != l)
      return ctx.error("attention_bias " + ir::dims_string(ad) + " is not [B or 1, N or 1, S, L]");
  }
  enum { kNone, kLengths, kEndStart, k2d, k3d } mask_kind = kNone;
  if (mask != nullptr) {
    if (mask->dtype() != ir::DType::kInt32) return ctx.error("key_padding_mask must be int32");
    const auto& md = mask->dims();
    if (md.size() == 1 && md[0] == b)
      mask_kind = kLengths;
    else if (md.size() == 1 && md[0] == 2 * b)
      mask_kind = kEndStart;
    else if (md.size() == 2 && md[0] == b && md[1] == l)
      mask_kind = k2d;
    else if (md.size() == 3 && md[0] == b && md[1] == s && md[2] == l)
      mask_kind = k3d;
    else
      return ctx.unsupported("key_padding_mask of shape " + ir::dims_string(md));
  }
  const bool causal = node.attr_int("unidirectional", 0) != 0;
  const double mask_filter = node.attr_float("mask_filter_value", -10000.0f);
  const double scale = node.has_attr("scale") && node.attr_float("scale", 0.0f) != 0.0f
                           ? node.attr_float("scale", 0.0f)
                           : 1.0 / std::sqrt(static_cast<double>(h));

  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, q.dtype(), {b, s, n * hv}));
  return dispatch_float(q.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* bd = bias != nullptr ? bias->data<T>() : nullptr;
    const std::vector<C> qh = to_heads<T, C>(q, b, n, s, h, bd);
    const std::vector<C> kh = to_heads<T, C>(*k, b, n, l, h, bd != nullptr ? bd + d : nullptr);
    const std::vector<C> vh = to_heads<T, C>(*v, b, n, l, hv, bd != nullptr ? bd + 2 * d : nullptr);
    // Mask per (b, s, l): 0, mask_filter_value for padding, lowest() for future keys.
    std::vector<C> mask_add(static_cast<size_t>(b * s * l), C(0));
    const int32_t* md = mask != nullptr ? mask->data<int32_t>() : nullptr;
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t si = 0; si < s; ++si)
        for (int64_t li = 0; li < l; ++li) {
          bool padded = false;
          switch (mask_kind) {
            case kNone:
              break;
            case kLengths:
              padded = li >= md[bi];
              break;
            case kEndStart:
              padded = li >= md[bi] || li < std::min<int64_t>(md[bi + b], l);
              break;
            case k2d:
              padded = md[bi * l + li] <= 0;
              break;
            case k3d:
              padded = md[(bi * s + si) * l + li] <= 0;
              break;
          }
          C m = padded ? static_cast<C>(mask_filter) : C(0);
          if (causal && li > si + (l - s)) m = std::numeric_limits<C>::lowest();
          mask_add[(bi * s + si) * l + li] = m;
        }
    const T* abd = attn_bias != nullptr ? attn_bias->data<T>() : nullptr;
    T* yd = y->mutable_data<T>();
    // One (batch, head) pair per task: each writes its own slice of y, so the split is exact.
    parallel_for(b * n, 1, [&](int64_t begin, int64_t end) {
      std::vector<C> scores(static_cast<size_t>(s * l)), ctx_out(static_cast<size_t>(s * hv));
      for (int64_t pair = begin; pair < end; ++pair) {
        const int64_t bi = pair / n, ni = pair % n;
        const C* qp = qh.data() + pair * s * h;
        const C* kp = kh.data() + pair * l * h;
        const C* vp = vh.data() + pair * l * hv;
        std::copy(mask_add.begin() + bi * s * l, mask_add.begin() + (bi + 1) * s * l,
                  scores.begin());
        gemm<C>(false, true, s, l, h, scale, qp, h, kp, h, 1.0, scores.data(), l);
        if (abd != nullptr) {
          const auto& ad = attn_bias->dims();
          const T* ab = abd + ((ad[0] == 1 ? 0 : bi) * ad[1] + (ad[1] == 1 ? 0 : ni)) * s * l;
          for (int64_t i = 0; i < s * l; ++i) scores[i] += static_cast<C>(to_compute(ab[i]));
        }
        for (int64_t si = 0; si < s; ++si) {  // softmax over keys
          C* row = scores.data() + si * l;
          const C mx = *std::max_element(row, row + l);
          if (std::isinf(mx) && mx < 0) {  // every key masked with -inf: zeros, not NaN
            std::fill(row, row + l, C{0});
            continue;
          }
          C sum = 0;
          for (int64_t li = 0; li < l; ++li) sum += (row[li] = std::exp(row[li] - mx));
          for (int64_t li = 0; li < l; ++li) row[li] /= sum;
        }
        gemm<C>(false, false, s, hv, l, 1.0, scores.data(), l, vp, hv, 0.0, ctx_out.data(), hv);
        for (int64_t si = 0; si < s; ++si)
          for (int64_t hi = 0; hi < hv; ++hi)
            yd[(bi * s + si) * n * hv + ni * hv + hi] =
                from_compute<T>(static_cast<compute_t<T>>(ctx_out[si * hv + hi]));
      }
    });
    // present_key / present_value: K and V (with bias) split into heads.
    for (size_t i = 1; i <= 2 && i < ctx.num_outputs(); ++i) {
      if (!ctx.wants_output(i)) continue;
      const std::vector<C>& src = i == 1 ? kh : vh;
      XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output(i, q.dtype(), {b, n, l, i == 1 ? h : hv}));
      T* od = o->mutable_data<T>();
      for (size_t j = 0; j < src.size(); ++j)
        od[j] = from_compute<T>(static_cast<compute_t<T>>(src[j]));
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("com.microsoft", "MultiHeadAttention", 1, 1, multi_head_attention);

}  // namespace xopt::exec::nn
