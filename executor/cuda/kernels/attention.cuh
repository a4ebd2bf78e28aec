// Device code of com.microsoft MultiHeadAttention: a fused flash-attention-style kernel that never
// stores the score matrices, and, for what it does not cover, the helpers of the unfused path: the
// split into heads (with the projection bias) and one fused pass over the score matrix:
// attention_bias + key padding / causal masks + softmax, in place.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

// dst [b, n, t, h] = src [b, t, n * h] + bias [n * h] (bias may be null).
cudaError_t launch_split_heads(const float* src, const float* bias, float* dst, int64_t b,
                               int64_t t, int64_t n, int64_t h, cudaStream_t stream);

// dst [b, t, n * h] = src [b, n, t, h] (the inverse of launch_split_heads without a bias).
cudaError_t launch_merge_heads(const float* src, float* dst, int64_t b, int64_t t, int64_t n,
                               int64_t h, cudaStream_t stream);

// key_padding_mask forms (int32): valid lengths [B], end and start positions [2B], [B, L] and
// [B, S, L] with 1 = keep.
enum class KeyMask : int { kNone, kLengths, kEndStart, k2d, k3d };

struct SoftmaxParams {
  int64_t b = 0, n = 0, s = 0, l = 0;
  // The batch items this launch covers: [b0, b0 + chunk) of b (chunk 0: all of them); scores
  // holds just those, masks and attention_bias are indexed by the item's place in the whole batch.
  int64_t b0 = 0, chunk = 0;
  // [ab_b, ab_n, s, l], ab_b in {1, b}, ab_n in {1, n}: float (launch_attention_softmax), or the
  // element type of the fused kernel's Q, K and V.
  const void* attn_bias = nullptr;
  int64_t ab_b = 1, ab_n = 1;
  const int32_t* mask = nullptr;
  KeyMask mask_kind = KeyMask::kNone;
  float mask_filter = -10000.0f;  // added where the key is padding
  bool causal = false;            // keys after the query position (offset l - s) get -FLT_MAX
};

// scores [b, n, s, l] = softmax over l of (scores + mask + attn_bias), in place.
cudaError_t launch_attention_softmax(float* scores, const SoftmaxParams& p, cudaStream_t stream);

// The largest query/key head size H and value head size Hv the fused kernel takes.
inline constexpr int64_t kFusedAttentionMaxHead = 128;

// One fused attention: for every (batch, head) pair,
//   y[bi, :, ni*hv:(ni+1)*hv] = softmax(scale * Q_h K_h^T + masks + attn_bias) V_h
// with the masks and the -inf rule of launch_attention_softmax, streaming over tiles of keys with
// an online softmax (no scratch). Q, K and V are read where they lie: head (bi, ni) of Q is the
// [s, h] matrix at q + bi * q_b + ni * q_n with row stride q_row (K [l, h] and V [l, hv] alike),
// plus the bias slice q_bias + ni * h (k_bias + ni * h, v_bias + ni * hv) when given.
//
// Q, K, V, the biases, attention_bias and y are all of `type`: float32, float16 or bfloat16 (the
// half types loaded into the float tiles; scores, softmax and accumulators are float, y rounded
// once).
struct FusedAttentionParams {
  ElemType type = ElemType::kFloat;
  int64_t b = 0, n = 0, s = 0, l = 0, h = 0, hv = 0;
  const void* q = nullptr;
  int64_t q_b = 0, q_n = 0, q_row = 0;
  const void* k = nullptr;
  int64_t k_b = 0, k_n = 0, k_row = 0;
  const void* v = nullptr;
  int64_t v_b = 0, v_n = 0, v_row = 0;
  const void* q_bias = nullptr;
  const void* k_bias = nullptr;
  const void* v_bias = nullptr;
  void* y = nullptr;  // [b, s, n * hv], every element written
  float scale = 1.0f;
  // Masks and attention_bias as for launch_attention_softmax (b, n, s, l as above; b0 = 0,
  // chunk = 0: the launch covers the whole batch).
  SoftmaxParams mask;
  // The tile shape, chosen by prepare_fused_attention: query rows per thread (1, 2 or 4; a block
  // takes 16 * rows queries) and the head capacity (32, 64 or 128, at least max(h, hv)).
  int rows = 0, dh = 0;
};

// At compile time (not while a stream is captured): chooses p.rows and p.dh for the current
// device (enough blocks for its SMs) and allows the kernel the dynamic shared memory it needs.
// cudaErrorInvalidValue when h or hv is outside [1, kFusedAttentionMaxHead].
cudaError_t prepare_fused_attention(FusedAttentionParams& p);

// Runs the fused attention prepared above; no allocation, graph-capturable.
cudaError_t launch_fused_attention(const FusedAttentionParams& p, cudaStream_t stream);

}  // namespace xopt::cuda
