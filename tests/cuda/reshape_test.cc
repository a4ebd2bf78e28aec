// Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout on the GPU against the CPU reference:
// views the plan aliases (nothing launched) and copies where it does not (a graph input, which
// lives outside the arena, reshaped straight into a graph output).
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 13, const std::string& inits = "") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + inputs +
         ") => (" + outputs + ") " + (inits.empty() ? "" : "<" + inits + "> ") + "{\n  " + body +
         "\n}";
}

TEST(CudaReshape, Views) {
  expect_cuda_matches_cpu(
      model("float[2,3,4] x", "float[6,4] y", "y = Reshape (x, s)", 13, "int64[2] s = {-1, 4}"));
  expect_cuda_matches_cpu(model("float[2,3,4] x", "float[4,6] y",
                                "r = Relu (x)\n  f = Reshape (r, s)\n  y = Neg (f)", 13,
                                "int64[2] s = {4, -1}"));
  expect_cuda_matches_cpu(model("float[2,3,4] x", "float[2,12] y", "y = Flatten (x)"));
  expect_cuda_matches_cpu(
      model("float[2,3,4] x", "float[6,4] y", "r = Relu (x)\n  y = Flatten <axis = 2> (r)"));
  expect_cuda_matches_cpu(
      model("float[2,1,4] x", "float[2,4] y", "y = Squeeze (x, a)", 13, "int64[1] a = {1}"));
  expect_cuda_matches_cpu(
      model("int64[3] x", "int64[1,3,1] y", "y = Unsqueeze (x, a)", 13, "int64[2] a = {0, -1}"));
  expect_cuda_matches_cpu(model("float[3,5] x", "float[3,5] y", "y = Identity (x)"));
  expect_cuda_matches_cpu(
      model("float[3,5] x", "float[3,5] y", "r = Relu (x)\n  d = Dropout (r)\n  y = Neg (d)"));
  expect_cuda_matches_cpu(model("float[3,5] x", "float[3,5] y, bool[3,5] m", "y, m = Dropout (x)"));
}

}  // namespace
}  // namespace xopt
