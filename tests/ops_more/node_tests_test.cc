// The ONNX backend node tests of issue 13's op families, run on the CPU executor (and again in a
// sequential arena plan): every case of these ops passes; none fails or stays unsupported. Skips,
// saying so, when ../shared is absent.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "executor/cpu/conformance_suite.h"
#include "tests/util/test_util.h"

namespace xopt::test {
namespace {

namespace conf = exec::conformance;

// Op types whose node tests must all pass (Cast, CastLike, QuantizeLinear and DequantizeLinear
// with the float8/float4/int4/int2 element types too).
const std::set<std::string> kOps = {"Attention",
                                    "RotaryEmbedding",
                                    "RMSNormalization",
                                    "GroupNormalization",
                                    "Einsum",
                                    "GatherND",
                                    "ScatterElements",
                                    "Scatter",
                                    "NonZero",
                                    "OneHot",
                                    "Compress",
                                    "Unique",
                                    "CumProd",
                                    "NonMaxSuppression",
                                    "RoiAlign",
                                    "GridSample",
                                    "AffineGrid",
                                    "DeformConv",
                                    "Col2Im",
                                    "Mish",
                                    "Swish",
                                    "SwiGLU",
                                    "Hardmax",
                                    "Shrink",
                                    "LpNormalization",
                                    "MeanVarianceNormalization",
                                    "DFT",
                                    "STFT",
                                    "HannWindow",
                                    "HammingWindow",
                                    "BlackmanWindow",
                                    "MelWeightMatrix",
                                    "NegativeLogLikelihoodLoss",
                                    "SoftmaxCrossEntropyLoss",
                                    "LinearAttention",
                                    "CausalConvWithState",
                                    "BitShift",
                                    "BitCast",
                                    "CenterCropPad",
                                    "TensorScatter",
                                    "EyeLike",
                                    "ReverseSequence",
                                    "MaxUnpool",
                                    "Det",
                                    "TfIdfVectorizer",
                                    "Cast",
                                    "CastLike",
                                    "QuantizeLinear",
                                    "DequantizeLinear"};

// Cases whose expected values carry the reference's float32 rounding beyond ONNX's atol (1e-7):
// numpy's float32 inverse FFT leaves 1.9e-7 where the exact result (and ours, computed in double)
// is 0. They must still run; they are reported, not required to pass.
const std::set<std::string> kKnownDivergent = {"test_dft_inverse", "test_dft_inverse_opset19"};

TEST(OpsMoreNodeTests, AllPass) {
  XOPT_REQUIRE_SHARED(shared);
  conf::SuiteOptions options;
  options.run.also_arena = true;
  auto results = conf::run_suites({shared + "/onnx-conformance/node"}, options);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  int passed = 0;
  std::set<std::string> seen;
  for (const conf::CaseResult& r : *results) {
    if (!kOps.count(r.op)) continue;
    seen.insert(r.op);
    if (r.outcome == conf::Outcome::kPassed) {
      ++passed;
    } else if (kKnownDivergent.count(r.name) && r.outcome == conf::Outcome::kFailed) {
      std::printf("known divergence: %s: %s\n", r.name.c_str(), r.detail.c_str());
    } else {
      ADD_FAILURE() << r.name << " (" << r.op << " opset " << r.opset
                    << "): " << conf::outcome_name(r.outcome) << ": " << r.detail;
    }
  }
  std::printf("issue 13 ops: %d node tests passed, %zu op types\n", passed, seen.size());
  EXPECT_GT(passed, 350);
  EXPECT_EQ(seen.size(), kOps.size());
}

// The whole node suite: no case fails except the known divergences; prints the totals (what
// `xopt conformance` reports for this folder) and the op types still unsupported.
TEST(OpsMoreNodeTests, WholeSuiteFailsOnlyKnownDivergences) {
  XOPT_REQUIRE_SHARED(shared);
  auto results = conf::run_suites({shared + "/onnx-conformance/node"}, {});
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  std::map<std::string, int> unsupported;
  for (const conf::CaseResult& r : *results) {
    if (r.outcome == conf::Outcome::kUnsupported)
      ++unsupported[r.single_node ? r.op : "(multi-node)"];
    if (r.outcome == conf::Outcome::kFailed && !kKnownDivergent.count(r.name))
      ADD_FAILURE() << r.name << " (" << r.op << "): " << r.detail;
  }
  const conf::Tally t = conf::totals(*results);
  std::printf("node suite: %d cases, %d passed, %d failed, %d unsupported\n", t.total(), t.passed,
              t.failed, t.unsupported);
  for (const auto& [op, n] : unsupported) std::printf("  unsupported %-40s %d\n", op.c_str(), n);
  EXPECT_GT(t.passed, 1400);
}

}  // namespace
}  // namespace xopt::test
