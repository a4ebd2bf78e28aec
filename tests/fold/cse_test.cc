// cse: identical nodes on identical inputs are merged.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// Merging the Relus makes the Transposes identical in turn.
TEST(Cse, MergesChainsOfIdenticalNodes) {
  EXPECT_REWRITES("cse", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[3,2] y) {
      a = Relu(x)
      b = Relu(x)
      c = Transpose <perm = [1, 0]> (a)
      d = Transpose <perm = [1, 0]> (b)
      y = Add(c, d)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[3,2] y) {
      a = Relu(x)
      c = Transpose <perm = [1, 0]> (a)
      y = Add(c, c)
    })");
}

// Attribute order does not matter; values do.
TEST(Cse, AttributesCompareByValue) {
  EXPECT_REWRITES("cse", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,4] y) {
      a = LeakyRelu <alpha = 0.5> (x)
      b = LeakyRelu <alpha = 0.5> (x)
      c = Gemm <alpha = 2.0, transB = 1> (a, b)
      d = Gemm <transB = 1, alpha = 2.0> (a, b)
      y = Concat <axis = 1> (c, d)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,4] y) {
      a = LeakyRelu <alpha = 0.5> (x)
      c = Gemm <alpha = 2.0, transB = 1> (a, a)
      y = Concat <axis = 1> (c, c)
    })");
}

TEST(Cse, DifferentAttributesOrInputsStay) {
  EXPECT_NOT_APPLIED("cse", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[2,3] z) => (float[2,3] y) {
      a = LeakyRelu <alpha = 0.5> (x)
      b = LeakyRelu <alpha = 0.25> (x)
      c = Relu(x)
      d = Relu(z)
      e = Sub(a, b)
      f = Sub(b, a)
      g1 = Add(e, f)
      g2 = Add(c, d)
      y = Add(g1, g2)
    })");
}

TEST(Cse, RandomOpsStay) {
  EXPECT_NOT_APPLIED("cse", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      a = RandomUniformLike(x)
      b = RandomUniformLike(x)
      y = Add(a, b)
    })");
}

// Two graph outputs keep their names, so their producers cannot merge; with one visible name
// the kept result takes it.
TEST(Cse, GraphOutputs) {
  EXPECT_NOT_APPLIED("cse", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] a, float[2] b) {
      a = Neg(x)
      b = Neg(x)
    })");
  EXPECT_REWRITES("cse", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] b) {
      a = Neg(x)
      b = Neg(x)
      y = Abs(a)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] b) {
      b = Neg(x)
      y = Abs(b)
    })");
}

TEST(Cse, NumericallyEquivalent) {
  auto stats = test::expect_pipeline_preserves_outputs(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,6] x) => (float[4,6] y, float[6,4] z) {
      a = Sigmoid(x)
      b = Sigmoid(x)
      c = Mul(a, x)
      d = Mul(b, x)
      e = Sub(c, d)
      f = Transpose(c)
      g1 = Transpose(d)
      y = Add(e, c)
      z = Add(f, g1)
    })",
                                                       "cse");
  ASSERT_NE(stats.find("cse"), nullptr);
  EXPECT_EQ(stats.find("cse")->counters.at("nodes"), 3);
}

}  // namespace
}  // namespace xopt
