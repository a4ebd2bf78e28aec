// Concat and Split on the GPU against the CPU reference (bit-exact): every axis, integer data,
// more parts than one launch takes, split sizes from the attribute, the input, equal parts and
// num_outputs with a short last part.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 17, const std::string& inits = "") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + inputs +
         ") => (" + outputs + ") " + (inits.empty() ? "" : "<" + inits + "> ") + "{\n  " + body +
         "\n}";
}

TEST(CudaConcat, Axes) {
  expect_cuda_matches_cpu(model("float[2,3,4] a, float[2,5,4] b, float[2,1,4] c", "float[2,9,4] y",
                                "y = Concat <axis = 1> (a, b, c)"));
  expect_cuda_matches_cpu(
      model("float[2,3,4] a, float[2,3,4] b", "float[4,3,4] y", "y = Concat <axis = 0> (a, b)"));
  expect_cuda_matches_cpu(
      model("float[2,3,3] a, float[2,3,5] b", "float[2,3,8] y", "y = Concat <axis = -1> (a, b)"));
  expect_cuda_matches_cpu(
      model("int64[2] a, int64[1] b, int64[3] c", "int64[6] y", "y = Concat <axis = 0> (a, b, c)"));
  expect_cuda_matches_cpu(
      model("bool[3,2] a, bool[3,5] b", "bool[3,7] y", "y = Concat <axis = 1> (a, b)"));
}

TEST(CudaConcat, ManyParts) {
  // 40 inputs: two launches.
  std::string inputs, args;
  for (int i = 0; i < 40; ++i) {
    inputs += (i ? ", " : "") + std::string("float[2,") + std::to_string(1 + i % 3) + ",4] x" +
              std::to_string(i);
    args += (i ? ", x" : "x") + std::to_string(i);
  }
  int total = 0;
  for (int i = 0; i < 40; ++i) total += 1 + i % 3;
  expect_cuda_matches_cpu(model(inputs, "float[2," + std::to_string(total) + ",4] y",
                                "y = Concat <axis = 1> (" + args + ")"));
}

TEST(CudaSplit, Sizes) {
  expect_cuda_matches_cpu(model("float[2,9,4] x", "float[2,2,4] a, float[2,7,4] b",
                                "a, b = Split <axis = 1> (x, s)", 13, "int64[2] s = {2, 7}"));
  expect_cuda_matches_cpu(model("float[2,9,4] x", "float[2,3,4] a, float[2,3,4] b, float[2,3,4] c",
                                "a, b, c = Split <axis = 1> (x)", 13));
  expect_cuda_matches_cpu(model("float[6,5] x", "float[6,1] a, float[6,4] b",
                                "a, b = Split <axis = -1, split = [1, 4]> (x)", 11));
  expect_cuda_matches_cpu(model("int64[5] x", "int64[2] a, int64[2] b, int64[1] c",
                                "a, b, c = Split <num_outputs = 3> (x)", 18));
  expect_cuda_matches_cpu(
      model("float[4,6] x", "float[2,6] a, float[2,6] b", "a, b = Split <axis = 0> (x)", 13));
}

}  // namespace
}  // namespace xopt
