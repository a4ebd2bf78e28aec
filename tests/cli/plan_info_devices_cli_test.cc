// `xopt plan-info --devices N`: the planned order cut into N pipeline stages
// (planner/stage_split.h), each planned on its own, with the values crossing each cut; a split past
// the node count is a usage error naming it.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

void write_planned(const test::TempDir& dir) {
  test::write_proto(dir / "m.onnx", test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,3,8,8] x) => (float[1,4,8,8] y)
      <float[4,3,1,1] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, float[4,4,1,1] v = {1, 0, 0, 0,
       0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}> {
      a = Conv(x, w)
      b = Relu(a)
      c = Conv(b, v)
      y = Add(c, a)
    })"));
  auto r = test::run_xopt({"--passes=plan", dir / "m.onnx", "-o", dir / "planned.onnx", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
}

TEST(PlanInfoDevices, PrintsEachStageAndWhatCrossesTheCuts) {
  test::TempDir dir;
  write_planned(dir);
  auto r = test::run_xopt({"plan-info", dir / "planned.onnx", "--devices", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string& out = r.out;
  ASSERT_NE(out.find("split over 2 devices"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  0 "), std::string::npos) << out;
  EXPECT_NE(out.find("\n  1 "), std::string::npos) << out;
  EXPECT_EQ(out.find("\n  2 "), std::string::npos) << out;
  // Whatever the cut, `a` (read by the last node) or the values after it cross it: at least one
  // transfer of a [1,4,8,8] float value (1 KiB).
  EXPECT_NE(out.find("stage 0 -> 1, 1.00 KiB"), std::string::npos) << out;
}

TEST(PlanInfoDevices, MoreDevicesThanNodesIsAUsageError) {
  test::TempDir dir;
  write_planned(dir);
  auto r = test::run_xopt({"plan-info", dir / "planned.onnx", "--devices", "9"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot split 4 nodes over 9 devices"), std::string::npos) << r.err;
  auto zero = test::run_xopt({"plan-info", dir / "planned.onnx", "--devices", "0"});
  EXPECT_NE(zero.code, 0);
}

}  // namespace
}  // namespace xopt
