// Gemm, com.microsoft FusedGemm, MatMul and com.microsoft FusedMatMul on the GPU (cuBLASLt)
// against the CPU reference: transposes, alpha/beta, every broadcast form of C (bias epilogue and
// the broadcast-copy path), FusedGemm activations (RELU epilogue and the epilogue kernel), MatMul's
// 1-D operands and broadcast batches (one strided call, the folded M, and several calls),
// FusedMatMul's transBatch.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& output, const std::string& node) {
  return "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\ng (" + inputs +
         ") => (" + output + ") {\n  " + node + "\n}";
}

TEST(CudaGemm, BiasVector) {
  expect_cuda_matches_cpu(
      model("float[4,5] a, float[5,6] b, float[6] c", "float[4,6] y", "y = Gemm (a, b, c)"));
}

TEST(CudaGemm, TransposesAlphaBetaFullC) {
  expect_cuda_matches_cpu(
      model("float[5,4] a, float[6,5] b, float[4,6] c", "float[4,6] y",
            "y = Gemm <transA = 1, transB = 1, alpha = 0.5, beta = 2.0> (a, b, c)"));
}

TEST(CudaGemm, BroadcastColumnC) {
  expect_cuda_matches_cpu(
      model("float[4,5] a, float[5,6] b, float[4,1] c", "float[4,6] y", "y = Gemm (a, b, c)"));
}

TEST(CudaGemm, BroadcastScalarC) {
  expect_cuda_matches_cpu(model("float[4,5] a, float[5,6] b, float[1] c", "float[4,6] y",
                                "y = Gemm <beta = 0.25> (a, b, c)"));
}

TEST(CudaGemm, RowCWithBeta) {
  expect_cuda_matches_cpu(model("float[3,7] a, float[6,7] b, float[1,6] c", "float[3,6] y",
                                "y = Gemm <transB = 1, beta = 0.5> (a, b, c)"));
}

TEST(CudaGemm, NoC) {
  expect_cuda_matches_cpu(
      model("float[8,16] a, float[16,3] b", "float[8,3] y", "y = Gemm <alpha = 2.0> (a, b)"));
}

TEST(CudaGemm, BetaZeroIgnoresC) {
  expect_cuda_matches_cpu(model("float[4,5] a, float[5,6] b, float[4,6] c", "float[4,6] y",
                                "y = Gemm <beta = 0.0> (a, b, c)"));
}

TEST(CudaFusedGemm, Activations) {
  const char* kActs[] = {
      "activation = \"Relu\"",
      "activation = \"LeakyRelu\", activation_alpha = 0.1",
      "activation = \"Tanh\"",
      "activation = \"Sigmoid\"",
      "activation = \"HardSigmoid\", activation_alpha = 0.2, activation_beta = 0.5",
      "activation = \"Elu\", activation_alpha = 1.0",
      "activation = \"Softplus\"",
      "activation = \"Softsign\"",
      "activation = \"Selu\", activation_alpha = 1.67, activation_gamma = 1.05",
      "activation = \"ThresholdedRelu\", activation_alpha = 0.3",
      "activation = \"ScaledTanh\", activation_alpha = 0.5, activation_beta = 2.0",
      "activation = \"ParametricSoftplus\", activation_alpha = 0.5, activation_beta = 2.0",
  };
  for (const char* act : kActs) {
    SCOPED_TRACE(act);
    // Bias epilogue (+ RELU_BIAS for Relu), full C with beta, and no C.
    expect_cuda_matches_cpu(
        model("float[6,8] a, float[10,8] b, float[10] c", "float[6,10] y",
              std::string("y = com.microsoft.FusedGemm <transB = 1, ") + act + "> (a, b, c)"));
    expect_cuda_matches_cpu(
        model("float[6,8] a, float[8,10] b, float[6,10] c", "float[6,10] y",
              std::string("y = com.microsoft.FusedGemm <beta = 0.5, ") + act + "> (a, b, c)"));
    expect_cuda_matches_cpu(model("float[6,8] a, float[8,10] b", "float[6,10] y",
                                  std::string("y = com.microsoft.FusedGemm <") + act + "> (a, b)"));
  }
}

TEST(CudaMatMul, TwoD) {
  expect_cuda_matches_cpu(model("float[3,4] a, float[4,5] b", "float[3,5] y", "y = MatMul (a, b)"));
}

TEST(CudaMatMul, BatchedSameShape) {
  expect_cuda_matches_cpu(
      model("float[2,3,4,5] a, float[2,3,5,6] b", "float[2,3,4,6] y", "y = MatMul (a, b)"));
}

TEST(CudaMatMul, SharedWeightFolded) {
  expect_cuda_matches_cpu(
      model("float[2,3,4,5] a, float[5,6] b", "float[2,3,4,6] y", "y = MatMul (a, b)"));
}

TEST(CudaMatMul, SharedLeftOperand) {
  expect_cuda_matches_cpu(
      model("float[4,5] a, float[2,5,6] b", "float[2,4,6] y", "y = MatMul (a, b)"));
}

TEST(CudaMatMul, CrossBroadcastSeveralCalls) {
  expect_cuda_matches_cpu(
      model("float[2,1,4,5] a, float[1,3,5,6] b", "float[2,3,4,6] y", "y = MatMul (a, b)"));
  expect_cuda_matches_cpu(
      model("float[1,4,5] a, float[3,5,2] b", "float[3,4,2] y", "y = MatMul (a, b)"));
  expect_cuda_matches_cpu(
      model("float[3,1,4,5] a, float[2,5,2] b", "float[3,2,4,2] y", "y = MatMul (a, b)"));
}

TEST(CudaMatMul, OneDOperands) {
  expect_cuda_matches_cpu(model("float[5] a, float[5,6] b", "float[6] y", "y = MatMul (a, b)"));
  expect_cuda_matches_cpu(model("float[2,3,5] a, float[5] b", "float[2,3] y", "y = MatMul (a, b)"));
  expect_cuda_matches_cpu(model("float[7] a, float[7] b", "float y", "y = MatMul (a, b)"));
  expect_cuda_matches_cpu(model("float[5] a, float[2,5,3] b", "float[2,3] y", "y = MatMul (a, b)"));
}

TEST(CudaMatMul, LargerSquare) {
  expect_cuda_matches_cpu(
      model("float[64,96] a, float[96,80] b", "float[64,80] y", "y = MatMul (a, b)"));
}

TEST(CudaFusedMatMul, TransposesAndAlpha) {
  expect_cuda_matches_cpu(
      model("float[2,5,4] a, float[2,6,5] b", "float[2,4,6] y",
            "y = com.microsoft.FusedMatMul <transA = 1, transB = 1, alpha = 0.5> (a, b)"));
  expect_cuda_matches_cpu(model("float[4,5] a, float[3,6,5] b", "float[3,4,6] y",
                                "y = com.microsoft.FusedMatMul <transB = 1> (a, b)"));
}

TEST(CudaFusedMatMul, TransBatch) {
  // A [3, 2, 4] read as [2, 3, 4]; B [4, 2, 5] read as [2, 4, 5].
  expect_cuda_matches_cpu(model("float[3,2,4] a, float[2,4,5] b", "float[2,3,5] y",
                                "y = com.microsoft.FusedMatMul <transBatchA = 1> (a, b)"));
  expect_cuda_matches_cpu(model("float[2,3,4] a, float[4,2,5] b", "float[2,3,5] y",
                                "y = com.microsoft.FusedMatMul <transBatchB = 1> (a, b)"));
}

}  // namespace
}  // namespace xopt
