// The golden-test helpers (tests/util/pass_golden.h) cannot lose their numeric check silently: a
// rewrite whose model the CPU executor cannot run fails unless the test says why
// (EXPECT_REWRITES_STRUCTURALLY), that reason fails once the executor can run the model, and a
// rewrite that changes the outputs fails.
#include "tests/util/pass_golden.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace xopt {
namespace {

// The random ids (0..3) index past the two rows of t: the CPU executor refuses to run the model,
// so the numeric half of a golden test cannot run.
constexpr const char* kUnrunnable = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] t, int64[5] ids) => (float[5,3] y) {
  i = Identity(ids)
  y = Gather(t, i)
}
)";
constexpr const char* kUnrunnableAfter = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] t, int64[5] ids) => (float[5,3] y) {
  y = Gather(t, ids)
}
)";

constexpr const char* kRunnable = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) {
  i = Identity(x)
  y = Relu(i)
}
)";
constexpr const char* kRunnableAfter = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) {
  y = Relu(x)
}
)";

TEST(PassGolden, TheExecutorCannotRunTheProbeModel) {
  auto outcome =
      test::run_pipeline("eliminate-noops", kUnrunnable, nullptr, test::kExact, "the probe itself");
  EXPECT_TRUE(outcome.changed);
  EXPECT_FALSE(outcome.numerically_checked);
  EXPECT_NE(outcome.why_unchecked, "");
}

TEST(PassGolden, RewriteWithoutItsNumericCheckFails) {
  EXPECT_NONFATAL_FAILURE(EXPECT_REWRITES_EXACTLY("eliminate-noops", kUnrunnable, kUnrunnableAfter),
                          "the numeric check did not run");
  EXPECT_NONFATAL_FAILURE(EXPECT_REWRITES("eliminate-noops", kUnrunnable, kUnrunnableAfter),
                          "the numeric check did not run");
}

TEST(PassGolden, StructuralOnlyRewriteSaysWhy) {
  EXPECT_REWRITES_STRUCTURALLY("eliminate-noops", kUnrunnable, kUnrunnableAfter,
                               "the ids index past the table");
  // The reason must stay true: a model the executor runs is checked numerically instead.
  EXPECT_NONFATAL_FAILURE(
      EXPECT_REWRITES_STRUCTURALLY("eliminate-noops", kRunnable, kRunnableAfter, "no reason"),
      "declared structural only");
  EXPECT_REWRITES_EXACTLY("eliminate-noops", kRunnable, kRunnableAfter);
}

}  // namespace
}  // namespace xopt
