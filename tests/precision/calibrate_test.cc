// The calibration run records each value's range, on inputs whose answer is known.
#include "precision/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/precision/precision_test_util.h"

namespace xopt {
namespace {

constexpr const char* kAdd = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) <float[4] c = {40000, 1, 2, 0.00001}> {
  y = Add(x, c)
}
)";

TEST(Calibrate, AddPastFloat16MaxReportsTheShareThatSaturates) {
  ir::Model m = test::parse(kAdd);
  auto x = ir::Tensor::of<float>({4}, {30000.0f, 1.0f, 0.0f, 0.0f});
  auto cal = precision::calibrate(m, {{{"x", x}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  const precision::RangeStats& y = cal->ranges.at("y");
  EXPECT_EQ(y.count, 4);
  EXPECT_DOUBLE_EQ(y.max_abs, 70000.0);
  EXPECT_EQ(y.fp16_saturate, 1);  // 70000 > 65504
  EXPECT_DOUBLE_EQ(y.share(y.fp16_saturate), 0.25);
  EXPECT_EQ(y.fp16_subnormal, 1);  // 1e-5 < 2^-14
  EXPECT_EQ(y.bf16_saturate, 0);
  EXPECT_EQ(y.bf16_subnormal, 0);
  EXPECT_FLOAT_EQ(static_cast<float>(y.min_nonzero_abs), 1e-5f);
  // The inputs and the initializer are recorded too; the first set's tensors are kept.
  EXPECT_DOUBLE_EQ(cal->ranges.at("x").max_abs, 30000.0);
  EXPECT_EQ(cal->ranges.at("x").fp16_saturate, 0);
  EXPECT_TRUE(cal->ranges.at("c").is_initializer);
  EXPECT_EQ(cal->values.at("y").numel(), 4);
  EXPECT_EQ(cal->input_sets, 1);
}

TEST(Calibrate, SeveralInputSetsAccumulate) {
  ir::Model m = test::parse(kAdd);
  auto a = ir::Tensor::of<float>({4}, {0.0f, 0.0f, 0.0f, 0.0f});
  auto b = ir::Tensor::of<float>({4}, {30000.0f, 0.0f, 0.0f, 0.0f});
  auto cal = precision::calibrate(m, {{{"x", a}}, {{"x", b}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  const precision::RangeStats& y = cal->ranges.at("y");
  EXPECT_EQ(y.count, 8);
  EXPECT_EQ(y.fp16_saturate, 1);
  EXPECT_DOUBLE_EQ(y.share(y.fp16_saturate), 0.125);
  EXPECT_EQ(cal->input_sets, 2);
  // Kept tensors are the first set's.
  EXPECT_FLOAT_EQ(cal->values.at("y").data<float>()[0], 40000.0f);
}

TEST(Calibrate, RandomInputsKeepIdsInRange) {
  constexpr const char* kEmbed = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[6] ids) => (float[6,2] y) <float[3,2] t = {1, 2, 3, 4, 5, 6}> {
  y = Gather(t, ids)
}
)";
  ir::Model m = test::parse(kEmbed);
  std::vector<std::string> notes;
  auto sets = precision::calibration_inputs(*m.graph, {}, &notes);
  ASSERT_TRUE(sets.is_ok()) << sets.status().message();
  ASSERT_EQ(sets->size(), 1u);
  auto cal = precision::calibrate(m, *sets);
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  EXPECT_LE(cal->ranges.at("y").max_abs, 6.0);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("seeded random"), std::string::npos);
}

TEST(Calibrate, MissingFolderIsAClearError) {
  ir::Model m = test::parse(kAdd);
  precision::CalibrationSource src;
  src.dir = "/nonexistent/calib";
  auto sets = precision::calibration_inputs(*m.graph, src);
  ASSERT_FALSE(sets.is_ok());
  EXPECT_NE(sets.status().message().find("/nonexistent/calib"), std::string::npos);
}

TEST(Calibrate, RunErrorsSayCalibration) {
  ir::Model m = test::parse(kAdd);
  auto cal = precision::calibrate(m, {{}});  // x missing
  ASSERT_FALSE(cal.is_ok());
  EXPECT_NE(cal.status().message().find("calibration run"), std::string::npos);
  EXPECT_NE(cal.status().message().find("'x'"), std::string::npos) << cal.status().message();
}

}  // namespace
}  // namespace xopt
