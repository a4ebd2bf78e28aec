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

// Many copies of one op on one value (removed last first): one is left, its readers and the
// input's use list exact (the pipeline verifies the graph after the pass).
TEST(Cse, ManyCopiesOfOneOpOnOneValue) {
  std::string body, sum;
  for (int i = 0; i < 300; ++i) {
    body += "      r" + std::to_string(i) + " = Mul(x, x)\n";
    sum += (i == 0 ? "r" : ", r") + std::to_string(i);
  }
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y, float[4] z) {
)" + body + "      y = Sum(" +
                           sum + ")\n      z = Neg(x)\n    }";
  EXPECT_TRUE(test::run_pipeline("cse", text).changed);  // and computes what it did
  // The use lists in memory, not as printed: x read twice by the Mul and once by the Neg.
  ir::Model m = test::parse_text(text);
  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  ASSERT_TRUE(pm.add_pipeline("cse").is_ok());
  passes::PassContext ctx;
  ASSERT_TRUE(pm.run(m, ctx).is_ok());
  EXPECT_EQ(test::count(test::op_counts(*m.graph), "Mul"), 1);
  const ir::Value* x = m.graph->find_value("x");
  ASSERT_NE(x, nullptr);
  ASSERT_EQ(x->uses().size(), 3u);
  std::map<std::string, int> readers;
  for (const ir::Use& u : x->uses()) ++readers[u.node->op_type()];
  EXPECT_EQ(readers["Mul"], 2);
  EXPECT_EQ(readers["Neg"], 1);
  const ir::Value* r = m.graph->find_value("r0");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->uses().size(), 300u);
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
