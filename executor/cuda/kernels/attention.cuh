// Device helpers of com.microsoft MultiHeadAttention: the split into heads (with the projection
// bias) and one fused pass over the score matrix: attention_bias + key padding / causal masks +
// softmax, in place.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

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
  const float* attn_bias = nullptr;  // [ab_b, ab_n, s, l], ab_b in {1, b}, ab_n in {1, n}
  int64_t ab_b = 1, ab_n = 1;
  const int32_t* mask = nullptr;
  KeyMask mask_kind = KeyMask::kNone;
  float mask_filter = -10000.0f;  // added where the key is padding
  bool causal = false;            // keys after the query position (offset l - s) get -FLT_MAX
};

// scores [b, n, s, l] = softmax over l of (scores + mask + attn_bias), in place.
cudaError_t launch_attention_softmax(float* scores, const SoftmaxParams& p, cudaStream_t stream);

}  // namespace xopt::cuda
