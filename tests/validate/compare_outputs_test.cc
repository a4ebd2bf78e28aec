// The tests' one output check (tests/util/compare_outputs.h) fails on what a loose check let
// through: NaN, infinities where the reference is finite, an all-zero output, a reference too small
// for its tolerance, a direction change that stays within the tolerance, and a bitwise difference.
#include "tests/util/compare_outputs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace xopt::test {
namespace {

using ir::Tensor;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor of(const std::vector<float>& v) {
  return Tensor::of<float>({static_cast<int64_t>(v.size())}, v);
}

TEST(CompareOutputs, CloseOutputsPass) {
  const Tensor ref = of({0.5f, -1.0f, 0.25f, 0.0f});
  EXPECT_EQ(output_difference(ref, ref), "");
  // 5e-5 off, within 1e-5 + 1e-4 * max|ref| = 1.1e-4.
  EXPECT_EQ(output_difference(of({0.50005f, -1.0f, 0.25f, 0.0f}), ref), "");
  EXPECT_NE(output_difference(of({0.5002f, -1.0f, 0.25f, 0.0f}), ref), "");
}

TEST(CompareOutputs, NanIsAMismatch) {
  const Tensor ref = of({0.5f, -1.0f, 0.25f, 0.0f});
  EXPECT_NE(output_difference(of({kNan, kNan, kNan, kNan}), ref), "") << "all NaN";
  EXPECT_NE(output_difference(of({0.5f, -1.0f, kNan, 0.0f}), ref), "") << "one NaN";
  EXPECT_NE(output_difference(of({0.5f, -1.0f, 0.25f, kNan}), ref, kBitwise), "");
  // NaN in the reference: it cannot tell right from wrong, even when the outputs agree.
  const Tensor nan_ref = of({0.5f, kNan});
  EXPECT_NE(output_difference(nan_ref, nan_ref), "");
}

TEST(CompareOutputs, InfinityWhereTheReferenceIsFiniteIsAMismatch) {
  const Tensor ref = of({0.5f, -1.0f, 0.25f});
  EXPECT_NE(output_difference(of({0.5f, kInf, 0.25f}), ref), "");
  EXPECT_NE(output_difference(of({0.5f, -kInf, 0.25f}), ref), "");
  // The same infinity as the reference is fine; the other sign is not.
  const Tensor inf_ref = of({0.5f, kInf});
  EXPECT_EQ(output_difference(inf_ref, inf_ref), "");
  EXPECT_NE(output_difference(of({0.5f, -kInf}), inf_ref), "");
}

TEST(CompareOutputs, AllZeroOutputFailsAgainstAnO1Reference) {
  EXPECT_NE(output_difference(of({0, 0, 0}), of({0.5f, -0.6f, 0.1f})), "");
}

// mobilenet_v2's old reference was ~8e-9: any output near zero passed atol 1e-5. The check now
// refuses such a reference instead of passing.
TEST(CompareOutputs, DegenerateReferenceFailsLoudly) {
  const Tensor tiny = of({7.7e-9f, -3e-9f, 1e-9f});
  const std::string why = output_difference(of({0, 0, 0}), tiny);
  EXPECT_NE(why.find("degenerate"), std::string::npos) << why;
  EXPECT_NE(output_difference(tiny, tiny), "") << "even an exact match proves nothing";
  EXPECT_NE(output_difference(of({0, 0}), of({0, 0})), "") << "a reference of zeros";
  // Without absolute slack the scale only has to be above zero.
  OutputTolerance relative;
  relative.atol = 0;
  EXPECT_EQ(output_difference(tiny, tiny, relative), "");
  EXPECT_NE(output_difference(of({0, 0, 0}), tiny, relative), "");
  // Integers have no tolerance: zeros are a fine reference.
  const Tensor zeros = Tensor::of<int64_t>({2}, {0, 0});
  EXPECT_EQ(output_difference(zeros, zeros), "");
  EXPECT_NE(output_difference(Tensor::of<int64_t>({2}, {0, 1}), zeros), "");
}

// Within the tolerance element by element, but pointing elsewhere: the cosine floor catches it.
TEST(CompareOutputs, CosineFloor) {
  std::vector<float> r(1000, 0.0f), g(1000, 0.0f);
  r[0] = 1.0f;
  for (int i = 1; i < 1000; ++i) {
    r[static_cast<size_t>(i)] = 1e-3f;
    g[static_cast<size_t>(i)] = -1e-3f;
  }
  g[0] = 1.0f;
  OutputTolerance loose;
  loose.rtol = 3e-3;  // |a-b| = 2e-3 <= 1e-5 + 3e-3
  const std::string why = output_difference(of(g), of(r), loose);
  EXPECT_NE(why.find("cosine"), std::string::npos) << why;
}

TEST(CompareOutputs, BitwiseAndShapes) {
  const Tensor ref = of({0.5f, -1.0f});
  EXPECT_EQ(output_difference(ref, ref, kBitwise), "");
  EXPECT_NE(output_difference(of({0.5f, std::nextafter(-1.0f, 0.0f)}), ref, kBitwise), "");
  EXPECT_NE(output_difference(of({0.5f, -1.0f, 0.0f}), ref), "") << "shape";
  EXPECT_NE(outputs_difference({ref}, {ref, ref}), "") << "output count";
  EXPECT_EQ(outputs_difference({ref, ref}, {ref, ref}), "");
}

TEST(CompareOutputs, MutationsOfAGoodOutputAreCaught) {
  const Tensor ref = of({0.5f, -1.0f, 0.25f, 0.75f});
  EXPECT_EQ(uncaught_mutations(ref, ref), "");
  // A tolerance loose enough to let a 1% error through is reported.
  OutputTolerance loose;
  loose.rtol = 0.02;
  EXPECT_EQ(uncaught_mutations(ref, ref, loose), "the comparison let through: 1% too large");
}

}  // namespace
}  // namespace xopt::test
