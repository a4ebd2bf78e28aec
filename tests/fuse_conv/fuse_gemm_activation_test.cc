// fuse-gemm-activation: Gemm + activation -> com.microsoft.FusedGemm.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(FuseGemmActivation, LeakyRelu) {
  EXPECT_REWRITES("fuse-gemm-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a) => (float[4,2] y) <float[2,3] w = {1, 2, 3, 4, 5, 6}, float[2] b = {1, 2}> {
      m = Gemm <transB = 1, alpha = 0.5> (a, w, b)
      y = LeakyRelu <alpha = 0.2> (m)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a) => (float[4,2] y) <float[2,3] w = {1, 2, 3, 4, 5, 6}, float[2] b = {1, 2}> {
      y = com.microsoft.FusedGemm <transB = 1, alpha = 0.5, activation = "LeakyRelu", activation_alpha = 0.2> (a, w, b)
    })");
}

TEST(FuseGemmActivation, ReluAndHardSigmoid) {
  EXPECT_REWRITES("fuse-gemm-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a, float[3,2] w) => (float[4,2] y, float[4,2] z) {
      m = Gemm(a, w)
      y = Relu(m)
      m2 = Gemm(a, w)
      z = HardSigmoid <alpha = 0.3> (m2)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a, float[3,2] w) => (float[4,2] y, float[4,2] z) {
      y = com.microsoft.FusedGemm <activation = "Relu"> (a, w)
      z = com.microsoft.FusedGemm <activation = "HardSigmoid", activation_alpha = 0.3, activation_beta = 0.5> (a, w)
    })");
}

// Activations only FusedGemm takes, with the ONNX defaults written out.
TEST(FuseGemmActivation, SeluWithDefaults) {
  EXPECT_REWRITES("fuse-gemm-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a, float[3,2] w) => (float[4,2] y) {
      m = Gemm(a, w)
      y = Selu(m)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a, float[3,2] w) => (float[4,2] y) {
      y = com.microsoft.FusedGemm <activation = "Selu", activation_alpha = 1.67326319217681884765625, activation_gamma = 1.05070102214813232421875> (a, w)
    })");
}

TEST(FuseGemmActivation, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-gemm-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a, float[3,2] w, double[4,3] ad, double[3,2] wd)
      => (float[4,2] y, float[4,2] z, float[4,2] m2, double[4,2] v) {
      m = Gemm(a, w)
      y = Clip(m)
      m2 = Gemm(a, w)
      z = Relu(m2)
      md = Gemm(ad, wd)
      v = Relu(md)
    })");
}

TEST(FuseGemmActivation, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[5,7] a) => (float[5,3] y, float[5,3] z, float[5,3] u, float[5,3] v, float[5,3] q,
                         float[5,3] s) <)" +
                     test::random_initializer("w", {3, 7}, 1) + ", " +
                     test::random_initializer("b", {3}, 2) + R"(> {
      m = Gemm <transB = 1, beta = 0.5> (a, w, b)
      y = Relu(m)
      m2 = Gemm <transB = 1> (a, w, b)
      z = Sigmoid(m2)
      m3 = Gemm <transB = 1, alpha = 2.0> (a, w)
      u = LeakyRelu <alpha = 0.3> (m3)
      m4 = Gemm <transB = 1> (a, w, b)
      v = Selu(m4)
      m5 = Gemm <transB = 1> (a, w, b)
      q = Elu <alpha = 0.5> (m5)
      m6 = Gemm <transB = 1> (a, w, b)
      s = Softplus(m6)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-gemm-activation");
  ASSERT_NE(stats.find("fuse-gemm-activation"), nullptr);
  EXPECT_EQ(stats.find("fuse-gemm-activation")->counters.at("fuse-gemm-activation"), 6);
}

}  // namespace
}  // namespace xopt
