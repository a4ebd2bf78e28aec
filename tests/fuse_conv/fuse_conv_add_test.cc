// fuse-conv-add: a constant per-channel Add after Conv moves into the bias.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(FuseConvAdd, ChannelConstantIntoBias) {
  EXPECT_REWRITES("fuse-conv-add", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[2] b = {1, 2}, float[2,1,1] c = {10, 20}> {
      z = Conv(x, w, b)
      y = Add(z, c)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[2] b_fused = {11, 22}> {
      y = Conv(x, w, b_fused)
    })");
}

// Constant on the left, [1,C,1,1] layout; Sub with the conv on the left; a scalar.
TEST(FuseConvAdd, OtherLayoutsAndSub) {
  EXPECT_REWRITES("fuse-conv-add", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[1,2,1,1] c = {10, 20}, float k = {0.5}> {
      z = Conv(x, w)
      a = Add(c, z)
      y = Sub(a, k)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[2] z_bias_fused_fused = {9.5, 19.5}> {
      y = Conv(x, w, z_bias_fused_fused)
    })");
}

TEST(FuseConvAdd, DoesNotApply) {
  // Varies over the spatial dims.
  EXPECT_NOT_APPLIED("fuse-conv-add", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,2,2] x) => (float[1,2,2,2] y)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[1,1,2,2] c = {1, 2, 3, 4}> {
      z = Conv(x, w)
      y = Add(z, c)
    })");
  // Not a constant; the constant minus the conv; the conv result read twice; a rank-5 constant
  // that would grow the result.
  EXPECT_NOT_APPLIED("fuse-conv-add", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,2,2] x, float[2,1,1] c) => (float[1,2,2,2] y, float[1,2,2,2] q, float[1,2,2,2] r,
                                              float[1,1,2,2,2] u)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[2,1,1] k = {1, 2}, float[1,1,2,1,1] k5 = {1, 2}> {
      z = Conv(x, w)
      y = Add(z, c)
      z2 = Conv(x, w)
      q = Sub(k, z2)
      z3 = Conv(x, w)
      r = Add(z3, k)
      r2 = Relu(z3)
      u0 = Conv(x, w)
      u = Add(u0, k5)
      s = Add(r, r2)
    })");
}

TEST(FuseConvAdd, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,5,5] x) => (float[2,4,5,5] y, float[2,4,5,5] z) <)" +
                     test::random_initializer("w", {4, 3, 3, 3}, 1) + ", " +
                     test::random_initializer("b", {4}, 2) + ", " +
                     test::random_initializer("c", {4, 1, 1}, 3) + ", " +
                     test::random_initializer("w2", {3, 4, 3, 3}, 4) + ", " +
                     test::random_initializer("c2", {1, 4, 1, 1}, 5) + R"(> {
      a = Conv <pads = [1, 1, 1, 1]> (x, w, b)
      y = Add(a, c)
      t = ConvTranspose <pads = [1, 1, 1, 1]> (x, w2)
      z = Sub(t, c2)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-conv-add");
  ASSERT_NE(stats.find("fuse-conv-add"), nullptr);
  EXPECT_EQ(stats.find("fuse-conv-add")->counters.at("fuse-conv-add"), 2);
}

}  // namespace
}  // namespace xopt
