// fuse-transpose: Transposes into Gemm, composed Transposes, collapsed Reshapes.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(FuseTranspose, IntoMatMulAsGemm) {
  EXPECT_REWRITES("fuse-transpose", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,4] a, float[5,3] b) => (float[4,5] y) {
      at = Transpose <perm = [1, 0]> (a)
      bt = Transpose (b)
      y = MatMul(at, bt)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,4] a, float[5,3] b) => (float[4,5] y) {
      y = Gemm <transA = 1, transB = 1> (a, b)
    })");
}

// A Transpose into a Gemm flips its flag; one read elsewhere too stays for that reader.
TEST(FuseTranspose, IntoGemmFlipsFlags) {
  EXPECT_REWRITES("fuse-transpose", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,4] a, float[3,5] b, float[5] c) => (float[4,5] y, float[5,3] bt) {
      at = Transpose <perm = [1, 0]> (a)
      bt = Transpose <perm = [1, 0]> (b)
      y = Gemm <transB = 1, alpha = 2.0> (at, bt, c)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,4] a, float[3,5] b, float[5] c) => (float[4,5] y, float[5,3] bt) {
      bt = Transpose <perm = [1, 0]> (b)
      y = Gemm <alpha = 2.0, transA = 1> (a, b, c)
    })");
}

TEST(FuseTranspose, ComposesTransposes) {
  EXPECT_REWRITES("fuse-transpose", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[4,2,3] y) {
      t = Transpose <perm = [1, 2, 0]> (x)
      y = Transpose <perm = [1, 2, 0]> (t)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[4,2,3] y) {
      y = Transpose <perm = [2, 0, 1]> (x)
    })");
}

// Inverse Transposes cancel; where both ends must keep their names an Identity stays.
TEST(FuseTranspose, InverseTransposesCancel) {
  EXPECT_REWRITES("fuse-transpose", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[2,3,4] y, float[2,3,4] z) {
      r = Relu(x)
      t = Transpose <perm = [2, 0, 1]> (r)
      u = Transpose <perm = [1, 2, 0]> (t)
      y = Neg(u)
      t2 = Transpose <perm = [1, 0, 2]> (x)
      z = Transpose <perm = [1, 0, 2]> (t2)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[2,3,4] y, float[2,3,4] z) {
      r = Relu(x)
      y = Neg(r)
      z = Identity(x)
    })");
}

TEST(FuseTranspose, CollapsesReshapes) {
  EXPECT_REWRITES("fuse-transpose", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[6,4] y, float[4,6] z) <int64[2] s1 = {4, 6}, int64[2] s2 = {6, 4},
                                                      int64[2] s3 = {0, -1}> {
      r = Reshape(x, s1)
      y = Reshape(r, s2)
      r2 = Reshape(x, s1)
      z = Reshape(r2, s3)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[6,4] y, float[4,6] z) <int64[2] s2 = {6, 4},
                                                      int64[2] s3_fused = {4, -1}> {
      y = Reshape(x, s2)
      z = Reshape(x, s3_fused)
    })");
}

TEST(FuseTranspose, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-transpose", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] a, float[2,4,5] b, float[2,3,4] x, int64[2] s, float[2,3,4] v)
      => (float[2,4,4] y, float[4,6] z, float[4,3,2] u, float[3,2,4] w) <int64[2] s1 = {6, 4}> {
      at = Transpose <perm = [0, 2, 1]> (a)
      y = MatMul(at, a)
      r = Reshape(x, s1)
      z = Reshape(r, s)
      u = Transpose (v)
      w = Transpose <perm = [1, 0, 2]> (v)
    })");
}

TEST(FuseTranspose, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[6,5] a, float[2,3,4,5] x) => (float[5,4] y, float[5,2,3,4] z, float[6,20] u) <)" +
                     test::random_initializer("w", {4, 6}, 1) + ", " +
                     test::random_initializer("c", {4}, 2) +
                     R"(, int64[3] s1 = {6, 4, 5}, int64[2] s2 = {0, -1}> {
      at = Transpose(a)
      wt = Transpose(w)
      y = Gemm <transA = 0> (at, wt, c)
      t1 = Transpose <perm = [0, 2, 3, 1]> (x)
      t2 = Transpose <perm = [2, 0, 3, 1]> (t1)
      z = Identity(t2)
      r = Transpose <perm = [3, 0, 1, 2]> (x)
      q = Reshape(r, s1)
      q2 = Reshape(q, s2)
      u = Reshape(q2, s2)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-transpose");
  ASSERT_NE(stats.find("fuse-transpose"), nullptr);
  EXPECT_GE(stats.find("fuse-transpose")->counters.at("fuse-transpose"), 3);
}

}  // namespace
}  // namespace xopt
