// fuse-matmul-add: 2-D MatMul + bias Add -> Gemm.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(FuseMatMulAdd, BiasVector) {
  EXPECT_REWRITES("fuse-matmul-add", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a) => (float[4,2] y) <float[3,2] w = {1, 2, 3, 4, 5, 6}, float[2] b = {1, 2}> {
      m = MatMul(a, w)
      y = Add(b, m)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,3] a) => (float[4,2] y) <float[3,2] w = {1, 2, 3, 4, 5, 6}, float[2] b = {1, 2}> {
      y = Gemm(a, w, b)
    })");
}

// A full [M, N] bias, and a [M, 1] one, both broadcast unidirectionally.
TEST(FuseMatMulAdd, MatrixBiases) {
  EXPECT_REWRITES("fuse-matmul-add", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] a, float[N,2] c, float[N,1] d) => (float[N,2] y, float[N,2] z)
      <float[3,2] w = {1, 2, 3, 4, 5, 6}> {
      m = MatMul(a, w)
      y = Add(m, c)
      m2 = MatMul(a, w)
      z = Add(m2, d)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] a, float[N,2] c, float[N,1] d) => (float[N,2] y, float[N,2] z)
      <float[3,2] w = {1, 2, 3, 4, 5, 6}> {
      y = Gemm(a, w, c)
      z = Gemm(a, w, d)
    })");
}

TEST(FuseMatMulAdd, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-matmul-add", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,3] a, float[4,3] a2, float[3,4,2] c, float[4,3] a3, float[4,3] a4, int64[4,3] ai)
      => (float[2,4,2] y, float[3,4,2] z, float[4,2] u, float[4,2] v, float[4,2] m4, int64[4,2] q)
      <float[3,2] w = {1, 2, 3, 4, 5, 6}, float[2] b = {1, 2}, int64[3,2] wi = {1, 2, 3, 4, 5, 6},
       int64[2] bi = {1, 2}> {
      m = MatMul(a, w)
      y = Add(m, b)
      m2 = MatMul(a2, w)
      z = Add(m2, c)
      m3 = MatMul(a3, w)
      u = Add(m3, m3)
      m4 = MatMul(a4, w)
      v = Add(m4, b)
      mi = MatMul(ai, wi)
      q = Add(mi, bi)
    })");
}

TEST(FuseMatMulAdd, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[5,7] a, float[5,1] r) => (float[5,3] y, float[5,3] z) <)" +
                     test::random_initializer("w", {7, 3}, 1) + ", " +
                     test::random_initializer("b", {1, 3}, 2) + R"(> {
      m = MatMul(a, w)
      y = Add(m, b)
      m2 = MatMul(a, w)
      z = Add(r, m2)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-matmul-add");
  ASSERT_NE(stats.find("fuse-matmul-add"), nullptr);
  EXPECT_EQ(stats.find("fuse-matmul-add")->counters.at("fuse-matmul-add"), 2);
}

}  // namespace
}  // namespace xopt
