// Accuracy figures (executor/cpu/accuracy.h) and their JSON (precision/accuracy.h) on tensors whose
// answers are known.
#include "precision/accuracy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "executor/cpu/compare.h"

namespace xopt {
namespace {

TEST(Accuracy, PercentilesOfTheAbsoluteError) {
  // |a - b| = 0.01 * i for i = 0..99 (b = 1): mean 0.495, median 0.49 (50th smallest), p99 0.98.
  std::vector<float> a(100), b(100, 1.0f);
  for (int i = 0; i < 100; ++i) a[i] = 1.0f + 0.01f * static_cast<float>(i);
  const exec::AccuracyStats s =
      exec::accuracy_stats(ir::Tensor::of<float>({100}, a), ir::Tensor::of<float>({100}, b));
  ASSERT_TRUE(s.measured);
  EXPECT_NEAR(s.mean_abs, 0.495, 1e-5);
  EXPECT_NEAR(s.median_abs, 0.49, 1e-5);
  EXPECT_NEAR(s.p99_abs, 0.98, 1e-5);
  EXPECT_EQ(s.nan, 0);
  EXPECT_EQ(s.inf, 0);
}

TEST(Accuracy, NanAndInfAreCounted) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const exec::TensorDiff d =
      exec::compare_tensors("y", ir::Tensor::of<float>({4}, {nan, inf, -inf, 1.0f}),
                            ir::Tensor::of<float>({4}, {1.0f, 1.0f, 1.0f, 1.0f}));
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.accuracy.nan, 1);
  EXPECT_EQ(d.accuracy.inf, 2);
  EXPECT_EQ(d.accuracy.ref_nan, 0);
}

TEST(Accuracy, TopOneAndTopFiveAgreementPerRow) {
  // Two rows of 6 classes. Row 0: same order. Row 1: the argmax moves from class 0 to class 1,
  // and the fifth class changes (5 in, 4 out): neither top-1 nor the top-5 set agree.
  const auto ref = ir::Tensor::of<float>({2, 6}, {6, 5, 4, 3, 2, 1,  //
                                                  9, 8, 7, 6, 5, 1});
  const auto got = ir::Tensor::of<float>({2, 6}, {6, 5, 4, 3, 2, 1,  //
                                                  8, 9, 7, 6, 1, 5});
  const exec::AccuracyStats s = exec::accuracy_stats(got, ref);
  EXPECT_EQ(s.rows, 2);
  EXPECT_DOUBLE_EQ(s.top1, 0.5);
  EXPECT_DOUBLE_EQ(s.top5, 0.5);
  // Only the argmax swapped: top-5 sets still agree.
  const auto swapped = ir::Tensor::of<float>({2, 6}, {6, 5, 4, 3, 2, 1,  //
                                                      8, 9, 7, 6, 5, 1});
  const exec::AccuracyStats t = exec::accuracy_stats(swapped, ref);
  EXPECT_DOUBLE_EQ(t.top1, 0.5);
  EXPECT_DOUBLE_EQ(t.top5, 1.0);
}

TEST(Accuracy, NotClassifierShaped) {
  const auto img = ir::Tensor::of<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const exec::AccuracyStats s = exec::accuracy_stats(img, img);
  EXPECT_TRUE(s.measured);
  EXPECT_EQ(s.top1, -1.0);
  const auto few = ir::Tensor::of<float>({1, 3}, {1, 2, 3});
  EXPECT_EQ(exec::accuracy_stats(few, few).top1, 1.0);
  EXPECT_EQ(exec::accuracy_stats(few, few).top5, -1.0);  // fewer than five classes
  const auto ints = ir::Tensor::of<int64_t>({1, 3}, {1, 2, 3});
  EXPECT_FALSE(exec::accuracy_stats(ints, ints).measured);
}

TEST(Accuracy, JsonCarriesTheVerdictAndTheWorstFigures) {
  const auto ref = ir::Tensor::of<float>({1, 5}, {1, 2, 3, 4, 5});
  const auto got = ir::Tensor::of<float>({1, 5}, {1, 2, 3, 4, 5.5f});
  precision::AccuracyTable t{"set 0", {exec::compare_tensors("logits", got, ref)}};
  const nlohmann::json j = precision::accuracy_json({t}, {});
  EXPECT_EQ(j["format"], "xopt.accuracy");
  EXPECT_FALSE(j["passed"].get<bool>());
  const auto& o = j["tables"][0]["outputs"][0];
  EXPECT_EQ(o["name"], "logits");
  EXPECT_NEAR(o["max_abs"].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(o["max_rel"].get<double>(), 0.1, 1e-6);
  EXPECT_EQ(o["top1"].get<double>(), 1.0);
  EXPECT_EQ(o["nan"].get<int64_t>(), 0);
  EXPECT_NEAR(j["worst"]["max_rel"].get<double>(), 0.1, 1e-6);
  EXPECT_EQ(j["worst"]["min_top1"].get<double>(), 1.0);
}

}  // namespace
}  // namespace xopt
