// fuse-layernorm: the decomposed mean/variance chain becomes LayerNormalization.
#include "tests/fusion_xfmr/xfmr_test_util.h"

namespace xopt {
namespace {

// The chain torch and TF exporters write: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div,
// Mul gamma, Add beta.
constexpr const char* kDecomposed = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,3,8] x) => (float[2,3,8] y)
     <float two = {2.0}, float eps = {1e-5},
      float[8] gamma = {0.5, 1.5, -1, 2, 0.25, 1, -0.5, 3},
      float[8] beta = {0.1, -0.2, 0.3, 0, 1, -1, 0.5, 2}> {
    mean = ReduceMean <axes = [-1]> (x)
    d = Sub(x, mean)
    p = Pow(d, two)
    var = ReduceMean <axes = [-1]> (p)
    ve = Add(var, eps)
    sd = Sqrt(ve)
    n = Div(d, sd)
    s = Mul(gamma, n)
    y = Add(s, beta)
  })";

TEST(FuseLayerNorm, DecomposedChain) {
  EXPECT_FUSES("fuse-layernorm", kDecomposed, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,8] x) => (float[2,3,8] y)
       <float[8] gamma = {0.5, 1.5, -1, 2, 0.25, 1, -0.5, 3},
        float[8] beta = {0.1, -0.2, 0.3, 0, 1, -1, 0.5, 2}> {
      y = LayerNormalization <axis = -1, epsilon = 1e-5> (x, gamma, beta)
    })");
  test::expect_numerically_equal("fuse-layernorm", kDecomposed);
}

// Mul(d, d) for the square, Reciprocal + Mul for the division, the centered value computed twice,
// no gamma or beta: LayerNormalization gets a ones scale.
constexpr const char* kVariant = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[4,6] x) => (float[4,6] y) <float eps = {1e-6}> {
    mean = ReduceMean <axes = [1]> (x)
    d1 = Sub(x, mean)
    d2 = Sub(x, mean)
    p = Mul(d1, d1)
    var = ReduceMean <axes = [1]> (p)
    ve = Add(eps, var)
    sd = Sqrt(ve)
    r = Reciprocal(sd)
    y = Mul(d2, r)
  })";

TEST(FuseLayerNorm, SquareAsMulReciprocalNoAffine) {
  EXPECT_FUSES("fuse-layernorm", kVariant, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,6] x) => (float[4,6] y) <float[6] y_scale = {1, 1, 1, 1, 1, 1}> {
      y = LayerNormalization <axis = -1, epsilon = 1e-6> (x, y_scale)
    })");
  test::expect_numerically_equal("fuse-layernorm", kVariant);
}

// Opset 18 takes the axes as an input; two trailing axes normalize together (axis = -2), and a
// rank-3 gamma [1,3,4] is reshaped to the normalized dims [3,4].
constexpr const char* kTwoAxes = R"(
  <ir_version: 8, opset_import: ["" : 18]>
  g (float[2,3,4] x) => (float[2,3,4] y)
     <int64[2] axes = {-2, -1}, float two = {2.0}, float eps = {1e-5},
      float[1,3,4] gamma = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}> {
    mean = ReduceMean(x, axes)
    d = Sub(x, mean)
    p = Pow(d, two)
    var = ReduceMean(p, axes)
    ve = Add(var, eps)
    sd = Sqrt(ve)
    n = Div(d, sd)
    y = Mul(n, gamma)
  })";

TEST(FuseLayerNorm, TrailingAxesAsInputsOpset18) {
  EXPECT_FUSES("fuse-layernorm", kTwoAxes, R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,3,4] x) => (float[2,3,4] y)
       <float[3,4] gamma_ln = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}> {
      y = LayerNormalization <axis = -2, epsilon = 1e-5> (x, gamma_ln)
    })");
  test::expect_numerically_equal("fuse-layernorm", kTwoAxes);
}

// Pow(v + eps, -0.5) multiplied in (the rsqrt form).
TEST(FuseLayerNorm, RsqrtAsPow) {
  constexpr const char* kRsqrt = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,5] x) => (float[3,5] y) <float two = {2.0}, float eps = {1e-5}, float mhalf = {-0.5},
                                        float[5] beta = {1, 2, 3, 4, 5}> {
      mean = ReduceMean <axes = [-1]> (x)
      d = Sub(x, mean)
      p = Pow(d, two)
      var = ReduceMean <axes = [-1]> (p)
      ve = Add(var, eps)
      rs = Pow(ve, mhalf)
      n = Mul(rs, d)
      y = Add(beta, n)
    })";
  EXPECT_FUSES("fuse-layernorm", kRsqrt, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,5] x) => (float[3,5] y) <float[5] beta = {1, 2, 3, 4, 5}, float[5] y_scale = {1, 1, 1, 1, 1}> {
      y = LayerNormalization <axis = -1, epsilon = 1e-5> (x, y_scale, beta)
    })");
  test::expect_numerically_equal("fuse-layernorm", kRsqrt);
}

// Normalizing over axis 1 of [2,3,8] is not a LayerNormalization (it needs trailing axes).
TEST(FuseLayerNorm, WrongAxisDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,8] x) => (float[2,3,8] y) <float two = {2.0}, float eps = {1e-5}> {
      mean = ReduceMean <axes = [1]> (x)
      d = Sub(x, mean)
      p = Pow(d, two)
      var = ReduceMean <axes = [1]> (p)
      ve = Add(var, eps)
      sd = Sqrt(ve)
      y = Div(d, sd)
    })");
}

// Mean over the last axis but variance over the last two: not one normalization.
TEST(FuseLayerNorm, MismatchedAxesDoNotApply) {
  EXPECT_NOT_APPLIED("fuse-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,8] x) => (float[2,3,8] y) <float two = {2.0}, float eps = {1e-5}> {
      mean = ReduceMean <axes = [-1]> (x)
      d = Sub(x, mean)
      p = Pow(d, two)
      var = ReduceMean <axes = [-2, -1]> (p)
      ve = Add(var, eps)
      sd = Sqrt(ve)
      y = Div(d, sd)
    })");
}

// Before opset 17 (no LayerNormalization): the model is raised to opset 17, which keeps the
// meaning of every node in it. Squeeze's and Split's attributes become inputs (opset 13), Softmax
// over the last axis gets an explicit axis, the ReduceMax and Relu cross type-only changes.
constexpr const char* kOpset12 = R"(
  <ir_version: 7, opset_import: ["" : 12]>
  g (float[2,3,8] x) => (float[2,3,8] y, float[2,8] s, float[2,3,8] sm, float[2,3,4] a,
                         float[2,3,4] b)
    <float two = {2.0}, float eps = {1e-5}> {
    mean = ReduceMean <axes = [-1]> (x)
    d = Sub(x, mean)
    p = Pow(d, two)
    var = ReduceMean <axes = [-1]> (p)
    ve = Add(var, eps)
    sd = Sqrt(ve)
    y = Div(d, sd)
    u = ReduceMax <axes = [1]> (x)
    r = Relu(u)
    s = Squeeze <axes = [1]> (r)
    sm = Softmax <axis = 2> (y)
    a, b = Split <axis = 2, split = [4, 4]> (y)
  })";

TEST(FuseLayerNorm, OldOpsetIsRaisedTo17) {
  EXPECT_FUSES("fuse-layernorm", kOpset12, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,8] x) => (float[2,3,8] y, float[2,8] s, float[2,3,8] sm, float[2,3,4] a,
                           float[2,3,4] b)
      <int64[1] s_axes = {1}, int64[2] a_split = {4, 4},
       float[8] y_scale = {1, 1, 1, 1, 1, 1, 1, 1}> {
      y = LayerNormalization <axis = -1, epsilon: float = 1e-5> (x, y_scale)
      u = ReduceMax <axes = [1]> (x)
      r = Relu(u)
      s = Squeeze(r, s_axes)
      sm = Softmax <axis = -1> (y)
      a, b = Split <axis = 2> (y, a_split)
    })");
  ir::Model m = test::parse_text(kOpset12);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fuse-layernorm").is_ok());
  passes::PassContext ctx;
  passes::PipelineStats stats;
  ASSERT_TRUE(pm.run(m, ctx, &stats).is_ok());
  EXPECT_EQ(m.graph->opset(""), 17);
  EXPECT_EQ(m.shell.ir_version(), 8);
  EXPECT_EQ(test::counter(stats, "fuse-layernorm", "opset-upgrade"), 1);
  test::expect_numerically_equal("fuse-layernorm", kOpset12);
}

// Where a node would change meaning at opset 17 (a Softmax over a leading axis: before 13 it
// flattens the trailing dims) or the model is below opset 11, the opset stays and nothing fuses.
TEST(FuseLayerNorm, OldOpsetThatCannotBeRaisedDoesNotApply) {
  const std::string chain = R"(
      mean = ReduceMean <axes = [-1]> (x)
      d = Sub(x, mean)
      p = Pow(d, two)
      var = ReduceMean <axes = [-1]> (p)
      ve = Add(var, eps)
      sd = Sqrt(ve)
      y = Div(d, sd))";
  EXPECT_NOT_APPLIED("fuse-layernorm", R"(
    <ir_version: 7, opset_import: ["" : 12]>
    g (float[2,3,8] x) => (float[2,3,8] y, float[2,3,8] sm) <float two = {2.0}, float eps = {1e-5}> {)" +
                                           chain + R"(
      sm = Softmax <axis = 1> (x)
    })");
  EXPECT_NOT_APPLIED("fuse-layernorm", R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[2,3,8] x) => (float[2,3,8] y) <float two = {2.0}, float eps = {1e-5}> {)" +
                                           chain + R"(
    })");
}

// The variance is also a graph output: the chain must stay.
TEST(FuseLayerNorm, IntermediateReadElsewhereDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y, float[2,1] var) <float two = {2.0}, float eps = {1e-5}> {
      mean = ReduceMean <axes = [-1]> (x)
      d = Sub(x, mean)
      p = Pow(d, two)
      var = ReduceMean <axes = [-1]> (p)
      ve = Add(var, eps)
      sd = Sqrt(ve)
      y = Div(d, sd)
    })");
}

// Pow with exponent 3 is no variance.
TEST(FuseLayerNorm, NotASquareDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-layernorm", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y) <float three = {3.0}, float eps = {1e-5}> {
      mean = ReduceMean <axes = [-1]> (x)
      d = Sub(x, mean)
      p = Pow(d, three)
      var = ReduceMean <axes = [-1]> (p)
      ve = Add(var, eps)
      sd = Sqrt(ve)
      y = Div(d, sd)
    })");
}

}  // namespace
}  // namespace xopt
