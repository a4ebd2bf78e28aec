// com.microsoft MultiHeadAttention on the GPU against the CPU reference: the forms fuse-attention
// emits (query/key/value [B, S, D], optional bias, scale, unidirectional, attention_bias) and the
// rest the CPU kernel runs (key_padding_mask forms, keys longer than queries, a different value
// width, key/value already split into heads, present outputs).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

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

TEST(CudaMultiHeadAttention, PresentOutputs) {
  expect_cuda_matches_cpu(
      model(std::string(kQkv) + ", float[48] bias",
            "float[2,6,16] y, float[2,2,6,8] pk, float[2,2,6,8] pv",
            "y, pk, pv = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, bias)"));
  expect_cuda_matches_cpu(
      model(kQkv, "float[2,6,16] y, float[2,2,6,8] pk",
            "y, pk = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"));
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
  expect_cuda_matches_cpu(
      model(qkv + ", int32[12] m, float[6,1,640,640] ab",
            "float[6,640,16] y, float[6,2,640,8] pk, float[6,2,640,8] pv",
            "y, pk, pv = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, bias, m, ab)"),
      c);
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

}  // namespace
}  // namespace xopt
