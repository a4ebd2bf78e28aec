// fold-shapes on Gather(Shape(x), k): one static dim of an otherwise symbolic shape becomes a
// constant. TorchScript's silero_vad_16k_op15 tests `state.shape[0] == 2` (state is [2, batch,
// 128]) in an If's condition; with the dim folded the If goes (inline-constant-if), as in
// onnxruntime.
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(FoldShapeDims, GatherOfAStaticDimFolds) {
  EXPECT_REWRITES_EXACTLY("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,N,128] state) => (int64 y, int64[2] z) <int64 zero = {0}, int64[2] ks = {-1, 0}> {
      s = Shape(state)
      d = Gather <axis = 0> (s, zero)
      y = Neg(d)
      e = Gather(s, ks)
      z = Neg(e)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,N,128] state) => (int64 y, int64[2] z)
       <int64 zero = {0}, int64[2] ks = {-1, 0}, int64 d = {2}, int64[2] e = {128, 2}> {
      s = Shape(state)
      y = Neg(d)
      z = Neg(e)
    })");
}

// Shape's start/end shift what Gather's index means: index 0 of Shape<start=1>(x) is x's dim 1.
TEST(FoldShapeDims, GatherCountsFromShapeStart) {
  EXPECT_REWRITES_EXACTLY("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,M] x) => (int64 y) <int64 zero = {0}> {
      s = Shape <start = 1> (x)
      d = Gather(s, zero)
      y = Neg(d)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,M] x) => (int64 y) <int64 zero = {0}, int64 d = {3}> {
      s = Shape <start = 1> (x)
      y = Neg(d)
    })");
}

TEST(FoldShapeDims, SymbolicDimDoesNotApply) {
  EXPECT_NOT_APPLIED("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,N,128] state, int64 k) => (int64 y, int64 w) <int64 one = {1}> {
      s = Shape(state)
      d = Gather(s, one)
      y = Neg(d)
      v = Gather(s, k)
      w = Neg(v)
    })");
}

// The silero pattern end to end: fold resolves the If on the static dim, numerically unchanged.
TEST(FoldShapeDims, FoldRemovesTheIfOnAStaticDim) {
  auto out = test::run_passes("fold,cleanup", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,N,4] state) => (float[2,N,4] y) <int64 zero = {0}> {
      s = Shape(state)
      d = Gather(s, zero)
      two = Constant <value = int64 {2}> ()
      c = Equal(d, two)
      y = If (c) <then_branch = t () => (float[2,N,4] a) {
          a = Relu(state)
        }, else_branch = e () => (float[2,N,4] b) {
          b = Neg(state)
        }>
    })");
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_EQ(out.text.find("If"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("Relu"), std::string::npos) << out.text;
  EXPECT_TRUE(out.numerically_checked) << out.why_unchecked;
  EXPECT_EQ(out.numeric_difference, "");
}

}  // namespace
}  // namespace xopt
