// fold-constants: nodes whose inputs are all constants become initializers.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(FoldConstants, ChainOfConstantsBecomesOneInitializer) {
  EXPECT_REWRITES("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] a = {1, 2}, float[2] b = {3, 4}> {
      c = Constant <value = float[2] {10, 20}> ()
      s = Add(a, b)
      t = Mul(s, c)
      y = Add(x, t)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] t = {40, 120}> {
      y = Add(x, t)
    })");
}

// PyTorch's exporter reads every weight through an Identity; the alias becomes the initializer.
TEST(FoldConstants, IdentityAliasesAndConstantNodes) {
  EXPECT_REWRITES("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] w = {1, 2}> {
      w2 = Identity(w)
      k = Constant <value_float = 2.5> ()
      m = Mul(x, w2)
      y = Mul(m, k)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] w2 = {1, 2}, float k = {2.5}> {
      m = Mul(x, w2)
      y = Mul(m, k)
    })");
}

// Shape arithmetic on constants (Shape -> Gather -> Unsqueeze -> Concat) folds to a shape.
TEST(FoldConstants, ShapeArithmetic) {
  EXPECT_REWRITES("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[6] x) => (float[2,3] y) <float[2,3] w = {1, 2, 3, 4, 5, 6}, int64 i = {0},
                                      int64[1] axes = {0}, int64[1] minus1 = {-1}> {
      s = Shape(w)
      d = Gather <axis = 0> (s, i)
      u = Unsqueeze(d, axes)
      shape = Concat <axis = 0> (u, minus1)
      y = Reshape(x, shape)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[6] x) => (float[2,3] y) <int64[2] shape = {2, -1}> {
      y = Reshape(x, shape)
    })");
}

// A folded graph output stays a node result: a Constant node of the same name.
TEST(FoldConstants, GraphOutputBecomesConstantNode) {
  auto r = test::run_passes("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] z) <float[2] a = {1, 2}> {
      z = Neg(a)
      y = Add(x, z)
    })");
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.text, test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] z) {
      z = Constant <value = float[2] {-1, -2}> ()
      y = Add(x, z)
    })"));
}

// A Constant node that is itself a graph output is already in its final form.
TEST(FoldConstants, ConstantGraphOutputStays) {
  EXPECT_NOT_APPLIED("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] k) {
      k = Constant <value = float[2] {1, 2}> ()
      y = Add(x, k)
    })");
}

constexpr const char* kBroadcast = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[256] x) => (float[256] y) <int64[1] n = {256}> {
      big = ConstantOfShape <value = float[1] {3}> (n)
      y = Add(x, big)
    })";

// 1 KiB from 8 bytes of input: under a 512-byte limit the broadcast stays computed.
TEST(FoldConstants, LargeResultStaysUnderTheLimit) {
  passes::PassContext ctx;
  ctx.mutable_options().fold_max_bytes = 512;
  auto r = test::run_passes("fold-constants", kBroadcast, &ctx);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text, test::canonical(kBroadcast));
  EXPECT_EQ(r.stats.find("fold-constants")->counters.at("left-large"), 1);
}

TEST(FoldConstants, LargeResultFoldsWithAHigherLimit) {
  passes::PassContext ctx;
  ctx.mutable_options().fold_max_bytes = 1024;
  auto r = test::run_passes("fold-constants", kBroadcast, &ctx);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("float[256] big"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("ConstantOfShape"), std::string::npos) << r.text;
}

// A large intermediate that further folding shrinks again is never materialised.
TEST(FoldConstants, LargeIntermediateThatShrinksFolds) {
  passes::PassContext ctx;
  ctx.mutable_options().fold_max_bytes = 512;
  auto r = test::run_passes("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float x) => (float y) <int64[1] n = {256}> {
      big = ConstantOfShape <value = float[1] {3}> (n)
      s = ReduceSum <keepdims = 0> (big)
      y = Add(x, s)
    })",
                            &ctx);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_EQ(r.text, test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float x) => (float y) <float s = {768}> {
      y = Add(x, s)
    })"));
}

// Tile and Expand of a constant weight: a chain of growing ops stays from the first that grows
// past the limit; the small Identity before it still folds.
TEST(FoldConstants, GrowingChainStopsAtTheLimit) {
  passes::PassContext ctx;
  ctx.mutable_options().fold_max_bytes = 64;
  auto r = test::run_passes("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8,8] x) => (float[8,8] y) <float[2] a = {1, 2}, int64[1] reps = {4},
                                        int64[2] shape = {8, 8}> {
      a2 = Identity(a)
      t = Tile(a2, reps)
      e = Expand(t, shape)
      y = Add(x, e)
    })",
                            &ctx);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  // t is 32 bytes (under the limit); e is 256 bytes, larger than its 48 bytes of input.
  EXPECT_EQ(r.text, test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8,8] x) => (float[8,8] y) <int64[2] shape = {8, 8}, float[8] t = {1, 2, 1, 2, 1, 2, 1, 2}> {
      e = Expand(t, shape)
      y = Add(x, e)
    })"));
}

TEST(FoldConstants, RandomOpsAndSubgraphsStay) {
  EXPECT_NOT_APPLIED("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] a = {1, 2}> {
      r = RandomNormalLike(a)
      y = Add(x, r)
    })");
  EXPECT_NOT_APPLIED("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] a = {1, 2}, float[2] b = {3, 4}, bool c = {1}> {
      i = If (c) <then_branch = g1 () => (float[2] t) { t = Identity(a) },
                  else_branch = g2 () => (float[2] e) { e = Identity(b) }>
      y = Add(x, i)
    })");
}

// Training-mode Dropout is random; inference Dropout folds like Identity.
TEST(FoldConstants, DropoutOnlyInInferenceMode) {
  EXPECT_NOT_APPLIED("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, bool train) => (float[2] y) <float[2] a = {1, 2}> {
      d = Dropout(a, , train)
      y = Add(x, d)
    })");
  EXPECT_REWRITES("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] a = {1, 2}> {
      d = Dropout(a)
      y = Add(x, d)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] d = {1, 2}> {
      y = Add(x, d)
    })");
}

// An initializer that is also a graph input (IR < 4) can be overridden at run time: not constant.
TEST(FoldConstants, OverridableInitializerStays) {
  EXPECT_NOT_APPLIED("fold-constants", R"(
    <ir_version: 3, opset_import: ["" : 11]>
    g (float[2] x, float[2] a) => (float[2] y) <float[2] a = {1, 2}> {
      n = Neg(a)
      y = Add(x, n)
    })");
}

// Readers inside a subgraph refer to the folded value by name: the initializer keeps it.
TEST(FoldConstants, ValueReadBySubgraphKeepsItsName) {
  EXPECT_REWRITES("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, bool c) => (float[2] y) <float[2] a = {1, 2}> {
      n = Neg(a)
      y = If (c) <then_branch = g1 () => (float[2] t) { t = Add(x, n) },
                  else_branch = g2 () => (float[2] e) { e = Identity(x) }>
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, bool c) => (float[2] y) <float[2] n = {-1, -2}> {
      y = If (c) <then_branch = g1 () => (float[2] t) { t = Add(x, n) },
                  else_branch = g2 () => (float[2] e) { e = Identity(x) }>
    })");
}

// What folding computes is what the executor computes at run time.
TEST(FoldConstants, NumericallyEquivalent) {
  std::string model = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,12] x) => (float[2,4] y, float[3,4] z) <)" +
                      test::random_initializer("w", {12, 4}, 1) + ", " +
                      test::random_initializer("b", {4}, 2) + R"(, int64[1] axes = {0},
                       int64 zero = {0}, float half = {0.5}> {
      w1 = Identity(w)
      wt = Transpose <perm = [1, 0]> (w1)
      w2 = Transpose <perm = [1, 0]> (wt)
      ws = Mul(w2, half)
      sh = Shape(ws)
      n = Gather(sh, zero)
      nn = Unsqueeze(n, axes)
      bb = Abs(b)
      m = MatMul(x, ws)
      y = Add(m, bb)
      three = Constant <value = int64[2] {3, 4}> ()
      z = ConstantOfShape <value = float[1] {1.5}> (three)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(model, "fold-constants");
  ASSERT_NE(stats.find("fold-constants"), nullptr);
  EXPECT_GE(stats.find("fold-constants")->counters.at("nodes"), 7);
  EXPECT_EQ(stats.nodes_after, 3);  // MatMul, Add, and the Constant standing for z
}

// A quantized weight read through DequantizeLinear stays int8 (folding it would store it in
// float); the scale arithmetic feeding it still folds.
TEST(FoldConstants, DequantizeLinearOfAnInitializerStaysQuantized) {
  EXPECT_REWRITES("fold-constants", R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,3] y) <int8[2,3] w = {1, -2, 3, -4, 5, -6}, float s0 = {0.25},
                                        float two = {2}, int8 z = {1}> {
      s = Mul(s0, two)
      wf = DequantizeLinear(w, s, z)
      y = MatMul(x, wf)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,3] y) <int8[2,3] w = {1, -2, 3, -4, 5, -6}, int8 z = {1},
                                        float s = {0.5}> {
      wf = DequantizeLinear(w, s, z)
      y = MatMul(x, wf)
    })");
}

}  // namespace
}  // namespace xopt
