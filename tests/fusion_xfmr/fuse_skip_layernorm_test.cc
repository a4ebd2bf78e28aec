// fuse-skip-layernorm: Add (+ bias Add) + LayerNormalization -> SkipLayerNormalization.
#include "tests/fusion_xfmr/xfmr_test_util.h"

namespace xopt {
namespace {

// A post-LN residual: LayerNorm(x + r).
constexpr const char* kResidual = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4,8] x, float[2,4,8] r) => (float[2,4,8] y)
     <float[8] gamma = {0.5, 1.5, -1, 2, 0.25, 1, -0.5, 3},
      float[8] beta = {0.1, -0.2, 0.3, 0, 1, -1, 0.5, 2}> {
    s = Add(x, r)
    y = LayerNormalization <axis = -1, epsilon = 1e-5> (s, gamma, beta)
  })";

TEST(FuseSkipLayerNorm, Residual) {
  EXPECT_FUSES("fuse-skip-layernorm", kResidual, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x, float[2,4,8] r) => (float[2,4,8] y)
       <float[8] gamma = {0.5, 1.5, -1, 2, 0.25, 1, -0.5, 3},
        float[8] beta = {0.1, -0.2, 0.3, 0, 1, -1, 0.5, 2}> {
      y = com.microsoft.SkipLayerNormalization <epsilon = 1e-5> (x, r, gamma, beta)
    })");
  EXPECT_EQ(test::ops_after("fuse-skip-layernorm", kResidual),
            std::vector<std::string>{"com.microsoft.SkipLayerNormalization"});
  test::expect_numerically_equal("fuse-skip-layernorm", kResidual);
}

// A pre-LN block: the projection's bias joins the fused node, and the residual sum, read further
// on, comes from output 3 (input_skip_bias_sum) under its own name.
constexpr const char* kPreLn = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4,8] x, float[2,4,8] h) => (float[2,4,8] y, float[2,4,8] z)
     <float[8] b = {1, 2, 3, 4, -1, -2, -3, -4},
      float[8] gamma = {0.5, 1.5, -1, 2, 0.25, 1, -0.5, 3}> {
    hb = Add(b, h)
    s = Add(x, hb)
    y = LayerNormalization <epsilon = 1e-6> (s, gamma)
    z = Mul(s, x)
  })";

TEST(FuseSkipLayerNorm, BiasAndSumOutput) {
  EXPECT_FUSES("fuse-skip-layernorm", kPreLn, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x, float[2,4,8] h) => (float[2,4,8] y, float[2,4,8] z)
       <float[8] b = {1, 2, 3, 4, -1, -2, -3, -4},
        float[8] gamma = {0.5, 1.5, -1, 2, 0.25, 1, -0.5, 3}> {
      y, , , s = com.microsoft.SkipLayerNormalization <epsilon = 1e-6> (x, h, gamma, , b)
      z = Mul(s, x)
    })");
  test::expect_numerically_equal("fuse-skip-layernorm", kPreLn);
}

// Token + position embeddings: the skip [1,S,D] broadcasts over the batch, as onnxruntime allows.
// The sum is a graph output too.
constexpr const char* kBroadcastSkip = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,3,4] x) => (float[2,3,4] y, float[2,3,4] s)
     <float[1,3,4] pos = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
      float[4] gamma = {1, 2, 3, 4}, float[4] beta = {0, 1, 0, 1}> {
    s = Add(pos, x)
    y = LayerNormalization(s, gamma, beta)
  })";

TEST(FuseSkipLayerNorm, BroadcastSkipAndSumAsGraphOutput) {
  EXPECT_FUSES("fuse-skip-layernorm", kBroadcastSkip, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,3,4] x) => (float[2,3,4] y, float[2,3,4] s)
       <float[1,3,4] pos = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
        float[4] gamma = {1, 2, 3, 4}, float[4] beta = {0, 1, 0, 1}> {
      y, , , s = com.microsoft.SkipLayerNormalization <epsilon = 1e-5> (x, pos, gamma, beta)
    })");
  test::expect_numerically_equal("fuse-skip-layernorm", kBroadcastSkip);
}

// The fuse group end to end: a decomposed LayerNorm of a residual sum becomes LayerNormalization
// (fuse-layernorm), then SkipLayerNormalization (fuse-skip-layernorm).
TEST(FuseSkipLayerNorm, DecomposedLayerNormThroughTheFuseGroup) {
  constexpr const char* kDecomposed = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,8] a, float[2,3,8] b) => (float[2,3,8] y)
       <float two = {2.0}, float eps = {1e-5}, float[8] gamma = {0.5, 1.5, -1, 2, 0.25, 1, -0.5, 3},
        float[8] beta = {0.1, -0.2, 0.3, 0, 1, -1, 0.5, 2}> {
      x = Add(a, b)
      mean = ReduceMean <axes = [-1]> (x)
      d = Sub(x, mean)
      p = Pow(d, two)
      var = ReduceMean <axes = [-1]> (p)
      ve = Add(var, eps)
      sd = Sqrt(ve)
      n = Div(d, sd)
      s = Mul(n, gamma)
      y = Add(s, beta)
    })";
  EXPECT_EQ(test::ops_after("fuse", kDecomposed),
            std::vector<std::string>{"com.microsoft.SkipLayerNormalization"});
  test::expect_numerically_equal("fuse", kDecomposed);
}

// SkipLayerNormalization normalizes the last axis only.
TEST(FuseSkipLayerNorm, OtherAxisDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-skip-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,8] x, float[2,4,8] r, float[4,8] gamma) => (float[2,4,8] y) {
      s = Add(x, r)
      y = LayerNormalization <axis = -2> (s, gamma)
    })");
}

// A skip [2,1,8] broadcasts along the sequence: not a shape onnxruntime takes.
TEST(FuseSkipLayerNorm, SkipOfAnotherShapeDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-skip-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,8] x, float[2,1,8] r) => (float[2,4,8] y) <float[8] gamma = {1, 1, 1, 1, 1, 1, 1, 1}> {
      s = Add(x, r)
      y = LayerNormalization(s, gamma)
    })");
}

// The saved mean is read: SkipLayerNormalization's mean output has another meaning.
TEST(FuseSkipLayerNorm, MeanOutputReadDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-skip-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x, float[2,8] r) => (float[2,8] y, float[2,1] mean)
       <float[8] gamma = {1, 1, 1, 1, 1, 1, 1, 1}> {
      s = Add(x, r)
      y, mean = LayerNormalization(s, gamma)
    })");
}

// No Add in front: nothing to fuse (fuse-layernorm's output stays a LayerNormalization).
TEST(FuseSkipLayerNorm, NoAddDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-skip-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y) <float[8] gamma = {1, 1, 1, 1, 1, 1, 1, 1}> {
      s = Relu(x)
      y = LayerNormalization(s, gamma)
    })");
}

}  // namespace
}  // namespace xopt
