// BatchNormalization (inference) on the GPU against the CPU reference: 4-D, 2-D and 5-D inputs,
// epsilon, and opset 8's per-activation statistics (spatial=0).
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

// Variances must be positive, so the parameters are initializers.
std::string model(const std::string& x, int64_t c, const std::string& attrs, int opset = 17) {
  std::string var, other;
  for (int64_t i = 0; i < c; ++i) {
    var += (i ? ", " : "") + std::to_string(0.25 + 0.5 * static_cast<double>(i % 4));
    other += (i ? ", " : "") + std::to_string(-0.75 + 0.3 * static_cast<double>(i % 6));
  }
  const std::string cs = std::to_string(c);
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (float" + x +
         " x) => (float" + x + " y) <float[" + cs + "] s = {" + other + "}, float[" + cs +
         "] b = {" + var + "}, float[" + cs + "] mean = {" + other + "}, float[" + cs +
         "] var = {" + var + "}> {\n  y = BatchNormalization " + attrs + " (x, s, b, mean, var)\n}";
}

TEST(CudaBatchNorm, FourD) {
  expect_cuda_matches_cpu(model("[2,3,4,5]", 3, ""));
}

TEST(CudaBatchNorm, EpsilonTwoDAndFiveD) {
  expect_cuda_matches_cpu(model("[4,6]", 6, "<epsilon = 0.01>"));
  expect_cuda_matches_cpu(model("[1,4,3,3,2]", 4, "<epsilon = 0.001>"));
}

TEST(CudaBatchNorm, LargePlanes) {
  expect_cuda_matches_cpu(model("[2,8,40,40]", 8, ""));
}

TEST(CudaBatchNorm, PerActivationOpset8) {
  // spatial=0: one statistic per (channel, position): C * H * W = 2 * 2 * 3 values.
  expect_cuda_matches_cpu(model("[2,2,2,3]", 12, "<spatial = 0>", 8));
}

}  // namespace
}  // namespace xopt
