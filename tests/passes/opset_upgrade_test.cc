// Raising the default opset (passes/fuse/opset_upgrade.h) past libonnx's 17, up to 22: the nodes
// whose spelling changed are respelled, every other node is left alone, the model computes what
// it did (bit for bit, on the CPU executor), and what cannot be crossed is refused by name.
#include <gtest/gtest.h>

#include "ir/text.h"
#include "passes/fuse/opset_upgrade.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

using passes::fuse::opset_upgrade_blocker;
using passes::fuse::upgrade_default_opset;

// Upgrades `before` to `target`; expects `after` (ONNX text) and the same outputs bit for bit.
void expect_upgrade(const char* before, int64_t target, const char* after) {
  ir::Model m = test::parse_text(before);
  ASSERT_EQ(opset_upgrade_blocker(m, target), "");
  upgrade_default_opset(m, target);
  EXPECT_EQ(m.graph->opset(""), target);
  EXPECT_EQ(m.shell.ir_version(), target >= 21 ? 10 : 9);
  EXPECT_EQ(ir::print_graph_text(m), test::canonical(after));
  bool checked = false;
  std::string why;
  EXPECT_EQ(test::numeric_difference(test::parse_text(before), m, test::kExact, &checked, &why),
            "");
  EXPECT_TRUE(checked) << why;
}

TEST(OpsetUpgrade, RespellsTheChangesFrom17To22) {
  expect_upgrade(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4,6,6] x, float[1,6,6,2] grid) => (float[1,4,1,1] m, float[1,2,6,6] a,
                                                   float[1,2,6,6] b, float[1,4,6,6] s,
                                                   float[1,4,6,6] c) <float[4,4,1,1] w = {1, 0, 0, 2, 0, 1, 3, 0, -1, 0, 1, 0, 0.5, 0, 0, 1}> {
      m = ReduceMean <axes = [2, 3], keepdims = 1> (x)
      a, b = Split <axis = 1> (x)
      s = GridSample <mode = "bilinear", align_corners = 1> (x, grid)
      c = Conv (x, w)
    })",
                 22, R"(
    <ir_version: 10, opset_import: ["" : 22]>
    g (float[1,4,6,6] x, float[1,6,6,2] grid) => (float[1,4,1,1] m, float[1,2,6,6] a,
                                                   float[1,2,6,6] b, float[1,4,6,6] s,
                                                   float[1,4,6,6] c)
      <float[4,4,1,1] w = {1, 0, 0, 2, 0, 1, 3, 0, -1, 0, 1, 0, 0.5, 0, 0, 1},
       int64[2] m_axes = {2, 3}> {
      m = ReduceMean <keepdims = 1> (x, m_axes)
      a, b = Split <axis = 1, num_outputs = 2> (x)
      s = GridSample <mode = "linear", align_corners = 1> (x, grid)
      c = Conv (x, w)
    })");
}

TEST(OpsetUpgrade, FromOpset12CrossesBothAttributeToInputChanges) {
  expect_upgrade(R"(
    <ir_version: 7, opset_import: ["" : 12]>
    g (float[2,3,1] x) => (float[2,3] y, float[2] z) {
      y = Squeeze <axes = [2]> (x)
      z = ReduceMax <axes = [1], keepdims = 0> (y)
    })",
                 22, R"(
    <ir_version: 10, opset_import: ["" : 22]>
    g (float[2,3,1] x) => (float[2,3] y, float[2] z) <int64[1] y_axes = {2}, int64[1] z_axes = {1}> {
      y = Squeeze (x, y_axes)
      z = ReduceMax <keepdims = 0> (y, z_axes)
    })");
}

// Opset 21 takes GroupNormalization's scale and bias per channel: each group's value repeated.
TEST(OpsetUpgrade, GroupNormalizationScaleBecomesPerChannel) {
  expect_upgrade(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1,4,3] x) => (float[1,4,3] y) <float[2] s = {2, 3}, float[2] b = {0.5, -1}> {
      y = GroupNormalization <num_groups = 2> (x, s, b)
    })",
                 21, R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[1,4,3] x) => (float[1,4,3] y)
      <float[4] s_per_channel = {2, 2, 3, 3}, float[4] b_per_channel = {0.5, 0.5, -1, -1}> {
      y = GroupNormalization <num_groups = 2> (x, s_per_channel, b_per_channel)
    })");
}

TEST(OpsetUpgrade, AlreadyThereChangesNothing) {
  const char* text = R"(
    <ir_version: 10, opset_import: ["" : 22]>
    g (float[2,3] x) => (float[2] y) <int64[1] a = {1}> { y = ReduceMean <keepdims = 0> (x, a) })";
  ir::Model m = test::parse_text(text);
  EXPECT_EQ(opset_upgrade_blocker(m, 22), "");
  upgrade_default_opset(m, 22);
  EXPECT_EQ(ir::print_graph_text(m), test::canonical(text));
}

TEST(OpsetUpgrade, RefusesWhatItCannotCross) {
  ir::Model group = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1,4,3] x, float[2] s, float[2] b) => (float[1,4,3] y) {
      y = GroupNormalization <num_groups = 2> (x, s, b)
    })");
  EXPECT_NE(opset_upgrade_blocker(group, 21).find("scale and bias are not initializers"),
            std::string::npos)
      << opset_upgrade_blocker(group, 21);
  EXPECT_EQ(opset_upgrade_blocker(group, 20), "");  // crossing 19 and 20 changes nothing for it

  ir::Model branch = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = If (c) <then_branch = t () => (float[2] r) { r = Relu(x) },
                  else_branch = e () => (float[2] r) { r = Neg(x) }>
    })");
  EXPECT_NE(opset_upgrade_blocker(branch, 22).find("has a subgraph"), std::string::npos);

  ir::Model relu = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Relu(x) })");
  EXPECT_EQ(opset_upgrade_blocker(relu, 22), "");
  EXPECT_NE(opset_upgrade_blocker(relu, 23).find("up to 22"), std::string::npos);
}

}  // namespace
}  // namespace xopt
