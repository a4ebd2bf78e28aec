// com.microsoft MultiHeadAttention on the GPU against the CPU reference: the forms fuse-attention
// emits (query/key/value [B, S, D], optional bias, scale, unidirectional, attention_bias) and the
// rest the CPU kernel runs (key_padding_mask forms, keys longer than queries, a different value
// width, key/value already split into heads, present outputs).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ir/tensor.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/lowp_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;
using fp32_only_fn = void (*)(std::string_view, const test::CudaCase&, const char*);
constexpr fp32_only_fn fp32_only = test::expect_cuda_matches_cpu_fp32_only;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& node) {
  return "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\ng (" + inputs +
         ") => (" + outputs + ") {\n  " + node + "\n}";
}

const char* kQkv = "float[2,6,16] q, float[2,6,16] k, float[2,6,16] v";

TEST(CudaMultiHeadAttention, Plain) {
  expect_cuda_matches_cpu(model(kQkv, "float[2,6,16] y",
                                "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"));
}

TEST(CudaMultiHeadAttention, BatchOneFourHeads) {
  expect_cuda_matches_cpu(model("float[1,5,32] q, float[1,5,32] k, float[1,5,32] v",
                                "float[1,5,32] y",
                                "y = com.microsoft.MultiHeadAttention <num_heads = 4> (q, k, v)"));
}

TEST(CudaMultiHeadAttention, BiasAndScale) {
  expect_cuda_matches_cpu(
      model(std::string(kQkv) + ", float[48] bias", "float[2,6,16] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.3> (q, k, v, bias)"));
}

TEST(CudaMultiHeadAttention, Unidirectional) {
  expect_cuda_matches_cpu(
      model(kQkv, "float[2,6,16] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, unidirectional = 1> (q, k, v)"));
}

TEST(CudaMultiHeadAttention, AttentionBiasBroadcastAndFull) {
  expect_cuda_matches_cpu(
      model(std::string(kQkv) + ", float[1,1,6,6] ab", "float[2,6,16] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, , , ab)"));
  expect_cuda_matches_cpu(
      model(std::string(kQkv) + ", float[2,2,6,6] ab, float[48] bias", "float[2,6,16] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, unidirectional = 1> (q, k, v, "
            "bias, , ab)"));
}

TEST(CudaMultiHeadAttention, KeyPaddingMasks) {
  const std::string qkv = std::string(kQkv);
  {
    test::CudaCase c;
    c.inputs["m"] = ir::Tensor::of<int32_t>({2}, {4, 6});
    expect_cuda_matches_cpu(
        model(qkv + ", int32[2] m", "float[2,6,16] y",
              "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, , m)"),
        c);
  }
  {
    test::CudaCase c;
    c.inputs["m"] = ir::Tensor::of<int32_t>({4}, {5, 6, 1, 0});
    expect_cuda_matches_cpu(
        model(qkv + ", int32[4] m", "float[2,6,16] y",
              "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, , m)"),
        c);
  }
  {
    test::CudaCase c;
    c.inputs["m"] = ir::Tensor::of<int32_t>({2, 6}, {1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0});
    expect_cuda_matches_cpu(model(qkv + ", int32[2,6] m", "float[2,6,16] y",
                                  "y = com.microsoft.MultiHeadAttention <num_heads = 2, "
                                  "mask_filter_value = -100.0> (q, k, v, , m)"),
                            c);
  }
  {
    test::CudaCase c;
    std::vector<int32_t> m3(2 * 6 * 6);
    for (size_t i = 0; i < m3.size(); ++i) m3[i] = (i * 7 % 5) != 0 ? 1 : 0;
    c.inputs["m"] = ir::Tensor::of<int32_t>({2, 6, 6}, m3);
    expect_cuda_matches_cpu(
        model(qkv + ", int32[2,6,6] m", "float[2,6,16] y",
              "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, , m)"),
        c);
  }
}

TEST(CudaMultiHeadAttention, LongerKeysWiderValuesCausal) {
  // L = 8 keys for S = 6 queries, value heads of 12; causal with the offset L - S.
  expect_cuda_matches_cpu(
      model("float[2,6,16] q, float[2,8,16] k, float[2,8,24] v, float[56] bias", "float[2,6,24] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, unidirectional = 1> (q, k, v, "
            "bias)"));
}

TEST(CudaMultiHeadAttention, KeyValueSplitIntoHeads) {
  expect_cuda_matches_cpu(model("float[2,6,16] q, float[2,2,8,8] k, float[2,2,8,8] v",
                                "float[2,6,16] y",
                                "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"));
}

// The unfused path runs float32 only (half types are refused there: CudaLowp.UnfusedAttention).
constexpr const char* kUnfusedFp32 = "the unfused attention path runs float32 only";

TEST(CudaMultiHeadAttention, PresentOutputs) {
  const test::CudaCase c;
  fp32_only(model(std::string(kQkv) + ", float[48] bias",
                  "float[2,6,16] y, float[2,2,6,8] pk, float[2,2,6,8] pv",
                  "y, pk, pv = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, bias)"),
            c, kUnfusedFp32);
  fp32_only(model(kQkv, "float[2,6,16] y, float[2,2,6,8] pk",
                  "y, pk = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"),
            c, kUnfusedFp32);
}

TEST(CudaMultiHeadAttention, QueryWithEveryKeyMaskedGivesZeros) {
  // attention_bias -inf on all of query 0's keys (batch 0) and on some of the others': the CPU
  // twin gives zeros for that query (not NaN), the GPU the same.
  test::CudaCase c;
  std::vector<float> ab(2 * 6 * 6, 0.0f);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < 6; ++i) ab[i] = ninf;
  for (size_t i = 6; i < ab.size(); i += 4) ab[i] = ninf;
  c.inputs["ab"] = ir::Tensor::of<float>({2, 1, 6, 6}, ab);
  expect_cuda_matches_cpu(
      model(std::string(kQkv) + ", float[2,1,6,6] ab", "float[2,6,16] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, , , ab)"),
      c);
}

TEST(CudaMultiHeadAttention, BatchRunsInChunks) {
  // 3.1 MiB of scores per item: planner::attention_batch_chunk runs the 6 items as 2 chunks of 3.
  // Masks, a per-item attention_bias and present outputs must follow each chunk's items.
  const std::string qkv = "float[6,640,16] q, float[6,640,16] k, float[6,640,16] v, float[48] bias";
  test::CudaCase c;
  c.inputs["m"] = ir::Tensor::of<int32_t>({12}, {640, 300, 17, 640, 1, 256, 0, 5, 0, 9, 0, 100});
  fp32_only(
      model(qkv + ", int32[12] m, float[6,1,640,640] ab",
            "float[6,640,16] y, float[6,2,640,8] pk, float[6,2,640,8] pv",
            "y, pk, pv = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, bias, m, ab)"),
      c, kUnfusedFp32);
  expect_cuda_matches_cpu(
      model("float[6,640,16] q, float[6,640,16] k, float[6,640,16] v", "float[6,640,16] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, unidirectional = 1> (q, k, v)"));
}

TEST(CudaMultiHeadAttention, BertSized) {
  // BERT-base's shape at a short sequence: 12 heads of 64.
  expect_cuda_matches_cpu(
      model("float[2,32,768] q, float[2,32,768] k, float[2,32,768] v, float[2304] bias",
            "float[2,32,768] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 12, scale = 0.125> (q, k, v, "
            "bias)"));
}

// ---- The fused kernel (planner::attention_fused_applies: head sizes up to 128, no present
// outputs). Its tiles: 16, 32 or 64 queries per block (rows per thread 1, 2 or 4, the most that
// still gives the H200's 132 SMs two blocks each) and 64 keys per step; shapes below cross those
// boundaries. ----

std::vector<int32_t> mask_2d(int64_t b, int64_t l, int64_t seed) {
  std::vector<int32_t> m(static_cast<size_t>(b * l));
  for (int64_t i = 0; i < b * l; ++i) m[static_cast<size_t>(i)] = (i * 7 + seed) % 5 != 0;
  return m;
}

TEST(CudaMultiHeadAttentionFused, BertShapeWithBiasAnd2dMask) {
  // BERT-base: 12 heads of 64, S = L = 128, the projection bias added on the fly; item 0 keeps its
  // first 100 keys, item 1 every key but each 7th.
  test::CudaCase c;
  std::vector<int32_t> m(2 * 128);
  for (int i = 0; i < 128; ++i) m[i] = i < 100, m[128 + i] = i % 7 != 3;
  c.inputs["m"] = ir::Tensor::of<int32_t>({2, 128}, m);
  expect_cuda_matches_cpu(
      model("float[2,128,768] q, float[2,128,768] k, float[2,128,768] v, float[2304] bias, "
            "int32[2,128] m",
            "float[2,128,768] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 12> (q, k, v, bias, m)"),
      c);
}

TEST(CudaMultiHeadAttentionFused, BertShapeBatchOne) {
  expect_cuda_matches_cpu(
      model("float[1,128,768] q, float[1,128,768] k, float[1,128,768] v", "float[1,128,768] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 12, scale = 0.125> (q, k, v)"));
}

TEST(CudaMultiHeadAttentionFused, MoreRowsPerThread) {
  // 4 * 12 pairs x 8 tiles of 64 queries (>= 264 blocks: 4 rows per thread, head capacity 64),
  // S = 480 (a partial query tile), L = 130 (a partial key tile).
  expect_cuda_matches_cpu(
      model("float[4,480,768] q, float[4,130,768] k, float[4,130,768] v, float[2304] bias",
            "float[4,480,768] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 12> (q, k, v, bias)"));
  // Heads of 16 (capacity 32), 4 rows per thread: 4 * 16 pairs x 5 tiles of 64 queries.
  expect_cuda_matches_cpu(
      model("float[4,300,256] q, float[4,300,256] k, float[4,300,256] v", "float[4,300,256] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 16, unidirectional = 1> (q, k, "
            "v)"));
  // Heads of 128 (capacity 128), 2 rows per thread: 4 * 4 pairs x 19 tiles of 32 queries.
  expect_cuda_matches_cpu(
      model("float[4,600,512] q, float[4,70,512] k, float[4,70,512] v, float[1536] bias",
            "float[4,600,512] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 4> (q, k, v, bias)"));
  // Heads of 96 (capacity 128), 1 row per thread.
  expect_cuda_matches_cpu(model("float[1,40,192] q, float[1,200,192] k, float[1,200,192] v",
                                "float[1,40,192] y",
                                "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"));
}

const char* kPartial = "float[2,70,96] q, float[2,90,96] k, float[2,90,96] v";  // 3 heads of 32

TEST(CudaMultiHeadAttentionFused, EveryKeyPaddingMaskKind) {
  // S = 70 and L = 90 both end in partial tiles.
  const std::string qkv = kPartial;
  {
    test::CudaCase c;  // valid lengths
    c.inputs["m"] = ir::Tensor::of<int32_t>({2}, {90, 37});
    expect_cuda_matches_cpu(
        model(qkv + ", int32[2] m", "float[2,70,96] y",
              "y = com.microsoft.MultiHeadAttention <num_heads = 3> (q, k, v, , m)"),
        c);
  }
  {
    test::CudaCase c;  // end and start positions: keys [10, 80) and [64, 90)
    c.inputs["m"] = ir::Tensor::of<int32_t>({4}, {80, 90, 10, 64});
    expect_cuda_matches_cpu(
        model(qkv + ", int32[4] m", "float[2,70,96] y",
              "y = com.microsoft.MultiHeadAttention <num_heads = 3> (q, k, v, , m)"),
        c);
  }
  {
    test::CudaCase c;  // [B, L], with a custom filter value
    c.inputs["m"] = ir::Tensor::of<int32_t>({2, 90}, mask_2d(2, 90, 1));
    expect_cuda_matches_cpu(model(qkv + ", int32[2,90] m", "float[2,70,96] y",
                                  "y = com.microsoft.MultiHeadAttention <num_heads = 3, "
                                  "mask_filter_value = -300.0> (q, k, v, , m)"),
                            c);
  }
  {
    test::CudaCase c;  // [B, S, L]
    c.inputs["m"] = ir::Tensor::of<int32_t>({2, 70, 90}, mask_2d(2 * 70, 90, 3));
    expect_cuda_matches_cpu(
        model(qkv + ", int32[2,70,90] m", "float[2,70,96] y",
              "y = com.microsoft.MultiHeadAttention <num_heads = 3> (q, k, v, , m)"),
        c);
  }
}

TEST(CudaMultiHeadAttentionFused, EveryKeyPaddedAttendsUniformly) {
  // Item 1's start lies past its end: every key gets mask_filter_value, so the softmax is taken
  // over scores near -10000 (rounded to 1/1024 there: a looser tolerance).
  test::CudaCase c;
  c.rtol = 1e-2;
  c.inputs["m"] = ir::Tensor::of<int32_t>({4}, {90, 20, 0, 50});
  expect_cuda_matches_cpu(model(std::string(kPartial) + ", int32[4] m", "float[2,70,96] y",
                                "y = com.microsoft.MultiHeadAttention <num_heads = 3> (q, k, v, , "
                                "m)"),
                          c);
}

TEST(CudaMultiHeadAttentionFused, AttentionBiasBroadcastForms) {
  for (const std::string ab : {"1,1", "2,1", "1,3", "2,3"}) {
    SCOPED_TRACE(ab);
    expect_cuda_matches_cpu(model(
        std::string(kPartial) + ", float[" + ab + ",70,90] ab, float[288] bias", "float[2,70,96] y",
        "y = com.microsoft.MultiHeadAttention <num_heads = 3> (q, k, v, bias, , ab)"));
  }
}

TEST(CudaMultiHeadAttentionFused, CausalWithMoreKeysThanQueries) {
  // L - S = 60: query i sees keys up to i + 60, across the key tiles; with a bias, a [B, L] mask
  // and attention_bias together.
  test::CudaCase c;
  c.inputs["m"] = ir::Tensor::of<int32_t>({2, 100}, mask_2d(2, 100, 2));
  expect_cuda_matches_cpu(
      model("float[2,40,64] q, float[2,100,64] k, float[2,100,64] v, float[192] bias, "
            "int32[2,100] m, float[1,2,40,100] ab",
            "float[2,40,64] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, unidirectional = 1> (q, k, v, "
            "bias, m, ab)"),
      c);
}

TEST(CudaMultiHeadAttentionFused, CausalWithFewerKeysThanQueries) {
  // L - S = -60: queries 0..59 have every key masked with the lowest float (not -inf): their
  // scores all round to it, so they attend to every key evenly, as the CPU reference.
  expect_cuda_matches_cpu(
      model("float[2,100,64] q, float[2,40,64] k, float[2,40,64] v", "float[2,100,64] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, unidirectional = 1> (q, k, v)"));
}

TEST(CudaMultiHeadAttentionFused, RowsWithEveryKeyMinusInfinityGiveZeros) {
  // attention_bias [2, 1, 70, 90]: query 0 of each item has every key at -inf (zeros); query 1
  // only its first key tile (keys 0..63: the running max stays -inf through the first tile);
  // query 2 only its second (keys 64..89: the last tile adds nothing); query 3 all keys but 89.
  test::CudaCase c;
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> ab(2 * 70 * 90, 0.0f);
  for (int bi = 0; bi < 2; ++bi) {
    float* a = ab.data() + bi * 70 * 90;
    for (int li = 0; li < 90; ++li) {
      a[0 * 90 + li] = ninf;
      if (li < 64) a[1 * 90 + li] = ninf;
      if (li >= 64) a[2 * 90 + li] = ninf;
      if (li != 89) a[3 * 90 + li] = ninf;
    }
    for (int i = 4 * 90; i < 70 * 90; i += 13) a[i] = ninf;
  }
  c.inputs["ab"] = ir::Tensor::of<float>({2, 1, 70, 90}, ab);
  expect_cuda_matches_cpu(
      model(std::string(kPartial) + ", float[2,1,70,90] ab", "float[2,70,96] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 3> (q, k, v, , , ab)"),
      c);
}

TEST(CudaMultiHeadAttentionFused, UnequalHeadSizes) {
  // Query/key heads of 32, value heads of 48 (capacity 64), with the bias: [128 + 128 + 192].
  expect_cuda_matches_cpu(
      model("float[2,50,128] q, float[2,70,128] k, float[2,70,192] v, float[448] bias",
            "float[2,50,192] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 4, scale = 0.2> (q, k, v, bias)"));
  // Odd sizes: heads of 5 and 7 (no float4 store of the output).
  expect_cuda_matches_cpu(model("float[2,9,10] q, float[2,11,10] k, float[2,11,14] v",
                                "float[2,9,14] y",
                                "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"));
}

TEST(CudaMultiHeadAttentionFused, KeyValueSplitIntoHeads) {
  // K, V [B, N, L, H] read in place, with a 2-D mask.
  test::CudaCase c;
  c.inputs["m"] = ir::Tensor::of<int32_t>({2, 130}, mask_2d(2, 130, 4));
  expect_cuda_matches_cpu(
      model("float[2,128,768] q, float[2,12,130,64] k, float[2,12,130,64] v, int32[2,130] m",
            "float[2,128,768] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 12> (q, k, v, , m)"),
      c);
}

TEST(CudaMultiHeadAttentionFused, FallsBackBeyondHead128) {
  // Heads of 144: the unfused path (cuBLASLt products and the softmax kernel, with workspace).
  test::CudaCase c;
  c.inputs["m"] = ir::Tensor::of<int32_t>({2}, {20, 33});
  fp32_only(
      model("float[2,30,288] q, float[2,33,288] k, float[2,33,288] v, float[864] bias, int32[2] m",
            "float[2,30,288] y",
            "y = com.microsoft.MultiHeadAttention <num_heads = 2, unidirectional = 1> (q, k, v, "
            "bias, m)"),
      c, kUnfusedFp32);
}

}  // namespace
}  // namespace xopt
