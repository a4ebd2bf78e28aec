// Passes inside an If branch whose declared output the branch contradicts. silero_vad.onnx (spox
// around two TorchScript exports) declares a nested branch's output float[N,128] where the branch
// computes float[1,128,2]: the exporter traced the other path. `fold,fuse,plan` failed in
// fold-shapes ("graph output ... is declared float[..] but the node computes float[1,128,2]");
// onnxruntime runs the model. The branch's passes now run with its outputs left to inference.
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

constexpr const char* kContradictedBranch = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (bool c, float[1,4] x) => (float[1,4] y) {
    y = If (c) <then_branch = t () => (float[1,4] a) {
        a = Relu(x)
      }, else_branch = e () => (float[M,4] b) {
        s = Shape(x)
        n = Size(s)
        k = Constant <value = int64[1] {2}> ()
        b = Unsqueeze(x, k)
      }>
  })";

TEST(SubgraphDeclaredOutputs, FoldShapesRunsInABranchThatContradictsItsDeclaration) {
  auto out = test::run_passes("fold-shapes", kContradictedBranch);
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_TRUE(out.changed);
  // The branch's Shape/Size folded; the branch output now declares what it computes.
  EXPECT_EQ(out.text.find("Shape"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("float[1,4,1] b"), std::string::npos) << out.text;
}

TEST(SubgraphDeclaredOutputs, WholePipelineKeepsTheTakenBranch) {
  auto out = test::run_passes("cleanup,fold,fuse", kContradictedBranch);
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_NE(out.text.find("Relu"), std::string::npos) << out.text;
}

// silero_vad's shape: the contradicting branch sits one If deeper (the 8 kHz model's LSTM wrapper).
TEST(SubgraphDeclaredOutputs, NestedContradictionInsideABranch) {
  auto out = test::run_passes("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, bool d, float[1,4] x) => (float[1,4] y) {
      y = If (c) <then_branch = t () => (float[1,4] a) {
          a = Relu(x)
        }, else_branch = e () => (float[1,4] b) {
          s = Shape(x)
          n = Size(s)
          b = If (d) <then_branch = t2 () => (float[1,4] p) {
              p = Neg(x)
            }, else_branch = e2 () => (float[M,4] q) {
              k = Constant <value = int64[1] {2}> ()
              q = Unsqueeze(x, k)
            }>
        }>
    })");
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_TRUE(out.changed);
  EXPECT_EQ(out.text.find("Shape"), std::string::npos) << out.text;
}

// A branch whose shapes contradict themselves otherwise (a Reshape of 4 elements into 15) is a
// branch the bound shapes never take: fold-shapes leaves it as it is instead of failing, and the
// executor still reports it if it runs.
TEST(SubgraphDeclaredOutputs, SelfContradictingBranchIsLeftAlone) {
  constexpr const char* kModel = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[1,4] x) => (float[1,4] y) {
      y = If (c) <then_branch = t () => (float[1,4] a) {
          a = Relu(x)
        }, else_branch = e () => (float[1,4] b) {
          s = Shape(x)
          n = Size(s)
          k = Constant <value = int64[2] {3, 5}> ()
          b = Reshape(x, k)
        }>
    })";
  auto out = test::run_pipeline("fold-shapes", kModel);
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_FALSE(out.changed);
  EXPECT_EQ(out.text, test::canonical(kModel));
}

}  // namespace
}  // namespace xopt
