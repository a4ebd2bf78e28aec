// compare_tensors: the three figures and the pass rule max|a-b| <= atol + rtol*max|ref|.
#include "executor/cpu/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "executor/cpu/validate.h"

namespace xopt::exec {
namespace {

using ir::Tensor;

TEST(Compare, FiguresOfAFloatPair) {
  Tensor ref = Tensor::of<float>({4}, {1.0f, -2.0f, 4.0f, 0.0f});
  Tensor got = Tensor::of<float>({4}, {1.0f, -2.0f, 4.002f, 0.001f});
  TensorDiff d = compare_tensors("y", got, ref, {1e-3, 0.0});
  EXPECT_TRUE(d.problem.empty());
  EXPECT_NEAR(d.max_abs, 0.002, 1e-6);
  EXPECT_EQ(d.worst_index, 2);
  EXPECT_DOUBLE_EQ(d.max_ref, 4.0);
  EXPECT_NEAR(d.max_rel, 0.0005, 1e-6);
  EXPECT_EQ(d.unequal, 2);
  // Cosine by hand: a.b / (|a||b|).
  const double a[] = {1.0, -2.0, static_cast<double>(4.002f), static_cast<double>(0.001f)};
  const double b[] = {1.0, -2.0, 4.0, 0.0};
  double dot = 0, na = 0, nb = 0;
  for (int i = 0; i < 4; ++i) dot += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
  EXPECT_NEAR(d.cosine, dot / std::sqrt(na * nb), 1e-12);
  EXPECT_TRUE(d.ok) << "0.002 <= 1e-3 * 4";
  EXPECT_FALSE(compare_tensors("y", got, ref, {1e-4, 1e-4}).ok) << "0.002 > 1e-4 + 4e-4";
  EXPECT_TRUE(compare_tensors("y", got, ref, {0.0, 0.002001}).ok) << "atol alone";
}

TEST(Compare, RelativeErrorIsAgainstTheLargestReferenceNotEachElement) {
  // Element-wise the second entry is 100% off; at the output's scale it is 1e-5.
  Tensor ref = Tensor::of<float>({2}, {10.0f, 1e-4f});
  Tensor got = Tensor::of<float>({2}, {10.0f, 2e-4f});
  TensorDiff d = compare_tensors("y", got, ref, {1e-4, 0.0});
  EXPECT_NEAR(d.max_rel, 1e-5, 1e-9);
  EXPECT_TRUE(d.ok);
}

TEST(Compare, IdenticalAndZeroTensors) {
  Tensor z = Tensor::of<float>({3}, {0, 0, 0});
  TensorDiff d = compare_tensors("z", z, z, {0.0, 0.0});
  EXPECT_TRUE(d.ok);
  EXPECT_EQ(d.max_abs, 0.0);
  EXPECT_EQ(d.max_rel, 0.0);
  EXPECT_EQ(d.cosine, 1.0);
  EXPECT_EQ(d.worst_index, -1);
  Tensor one = Tensor::of<float>({3}, {0, 1, 0});
  TensorDiff e = compare_tensors("z", one, z, {});
  EXPECT_FALSE(e.ok);
  EXPECT_TRUE(std::isinf(e.max_rel));
  EXPECT_EQ(e.cosine, 0.0);
}

TEST(Compare, NaNMustSitWhereTheReferenceHasNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor ref = Tensor::of<float>({3}, {nan, inf, 1.0f});
  EXPECT_TRUE(compare_tensors("y", ref, ref, {0, 0}).ok);
  TensorDiff d = compare_tensors("y", Tensor::of<float>({3}, {0.0f, inf, 1.0f}), ref, {1, 1});
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.nonfinite_mismatch, 1);
  EXPECT_EQ(d.worst_index, 0);
  EXPECT_TRUE(std::isinf(d.max_abs));
  EXPECT_FALSE(compare_tensors("y", Tensor::of<float>({3}, {nan, -inf, 1.0f}), ref, {1, 1}).ok);
}

TEST(Compare, IntegersAndBoolMustBeEqual) {
  Tensor a = Tensor::of<int64_t>({3}, {1, 2, 3});
  Tensor b = Tensor::of<int64_t>({3}, {1, 2, 4});
  TensorDiff d = compare_tensors("i", a, b, {1.0, 10.0});
  EXPECT_FALSE(d.ok) << "tolerances do not apply to integers";
  EXPECT_EQ(d.unequal, 1);
  EXPECT_EQ(d.max_abs, 1.0);
  EXPECT_TRUE(compare_tensors("i", a, a, {}).ok);
  Tensor t = Tensor::of<bool>({2}, {true, false});
  Tensor f = Tensor::of<bool>({2}, {true, true});
  EXPECT_FALSE(compare_tensors("b", t, f, {}).ok);
  EXPECT_TRUE(compare_tensors("b", t, t, {}).ok);
  Tensor s1 = Tensor::of_strings({2}, {"a", "b"});
  Tensor s2 = Tensor::of_strings({2}, {"a", "c"});
  EXPECT_FALSE(compare_tensors("s", s1, s2, {}).ok);
  EXPECT_TRUE(compare_tensors("s", s1, s1, {}).ok);
}

TEST(Compare, Float16UsesItsValues) {
  Tensor a(ir::DType::kFloat16, {2});
  Tensor b(ir::DType::kFloat16, {2});
  a.mutable_data<uint16_t>()[0] = ir::float_to_half(1.0f);
  a.mutable_data<uint16_t>()[1] = ir::float_to_half(2.0f);
  b.mutable_data<uint16_t>()[0] = ir::float_to_half(1.0f);
  b.mutable_data<uint16_t>()[1] = ir::float_to_half(2.001953125f);  // the next half up
  TensorDiff d = compare_tensors("h", a, b, {1e-2, 0});
  EXPECT_NEAR(d.max_abs, 0.001953125, 1e-9);
  EXPECT_TRUE(d.ok);
}

TEST(Compare, DtypeAndShapeMismatchesAreProblemsNotNumbers) {
  Tensor f = Tensor::of<float>({2}, {1, 2});
  TensorDiff d = compare_tensors("y", Tensor::of<double>({2}, {1, 2}), f, {});
  EXPECT_FALSE(d.ok);
  EXPECT_NE(d.problem.find("dtype double, expected float"), std::string::npos) << d.problem;
  TensorDiff s = compare_tensors("y", Tensor::of<float>({1, 2}, {1, 2}), f, {});
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.problem.find("shape [1,2], expected [2]"), std::string::npos) << s.problem;
}

TEST(Compare, TableHasOneRowPerOutputAndStatesTheRule) {
  Tensor ref = Tensor::of<float>({2}, {1, 2});
  std::vector<TensorDiff> diffs = {
      compare_tensors("good", ref, ref, {}),
      compare_tensors("bad", Tensor::of<float>({2}, {1, 3}), ref, {}),
      compare_tensors("odd", Tensor::of<float>({3}, {1, 2, 3}), ref, {})};
  EXPECT_FALSE(all_ok(diffs));
  const std::string t = format_diff_table(diffs, {1e-4, 1e-5}, "title line");
  EXPECT_EQ(t.rfind("title line\n", 0), 0u) << t;
  EXPECT_NE(t.find("output"), std::string::npos);
  EXPECT_NE(t.find("max abs"), std::string::npos);
  EXPECT_NE(t.find("cosine"), std::string::npos);
  EXPECT_NE(t.find("good"), std::string::npos);
  EXPECT_NE(t.find("1.000e+00"), std::string::npos) << "bad's max abs: " << t;
  EXPECT_NE(t.find("5.000e-01"), std::string::npos) << "bad's max rel: " << t;
  EXPECT_NE(t.find("MISMATCH: shape [3], expected [2]"), std::string::npos) << t;
  EXPECT_NE(t.find("atol + rtol*max|ref|"), std::string::npos) << t;
  EXPECT_NE(t.find("rtol 1.000e-04, atol 1.000e-05"), std::string::npos) << t;
}

TEST(CompareOutputs, ByNameThenByPosition) {
  ModelOutputs ref{{"a", "b"}, {Tensor::of<float>({1}, {1}), Tensor::of<float>({1}, {2})}, ""};
  ModelOutputs swapped{{"b", "a"}, {Tensor::of<float>({1}, {2}), Tensor::of<float>({1}, {1})}, ""};
  auto d = compare_outputs(swapped, ref, {});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(all_ok(d)) << "matched by name, not position";
  ModelOutputs renamed{{"x", "y"}, {Tensor::of<float>({1}, {1}), Tensor::of<float>({1}, {2})}, ""};
  d = compare_outputs(renamed, ref, {});
  EXPECT_TRUE(all_ok(d));
  EXPECT_EQ(d[0].name, "a ~ x");
  ModelOutputs fewer{{"x"}, {Tensor::of<float>({1}, {1})}, ""};
  d = compare_outputs(fewer, ref, {});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_FALSE(d[0].ok);
  EXPECT_NE(d[0].problem.find("no output"), std::string::npos);
}

}  // namespace
}  // namespace xopt::exec
