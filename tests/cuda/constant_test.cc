// Constant, Shape, Size and ConstantOfShape on the GPU against the CPU reference (bit-exact):
// values written from the launch's parameters, including one spanning several chunks.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 17) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + inputs +
         ") => (" + outputs + ") {\n  " + body + "\n}";
}

TEST(CudaConstant, Values) {
  expect_cuda_matches_cpu(model("float[2,3] x", "float[2,3] y",
                                "c = Constant <value = float[2,3] {1, 2, 3, 4, 5, 6}> ()\n"
                                "  y = Add (x, c)"));
  expect_cuda_matches_cpu(model("int64[3] x", "int64[3] y",
                                "c = Constant <value_ints = [7, -8, 9]> ()\n  y = Mul (x, c)"));
  expect_cuda_matches_cpu(
      model("float[4] x", "float[4] y", "c = Constant <value_float = 2.5> ()\n  y = Mul (x, c)"));
  // 4 KiB of floats: two parameter chunks.
  std::string values;
  for (int i = 0; i < 1024; ++i) values += (i ? ", " : "") + std::to_string(i % 17 - 8);
  expect_cuda_matches_cpu(model("float[1024] x", "float[1024] y",
                                "c = Constant <value = float[1024] {" + values +
                                    "}> ()\n"
                                    "  y = Sub (x, c)"));
}

TEST(CudaConstant, ShapeSizeConstantOfShape) {
  expect_cuda_matches_cpu(model("float[2,3,5] x", "int64[3] y", "y = Shape (x)"));
  expect_cuda_matches_cpu(model("float[2,3,5] x", "int64[2] y", "y = Shape <start = -2> (x)", 15));
  expect_cuda_matches_cpu(
      model("float[2,3,5] x", "int64[1] y", "y = Shape <start = 1, end = 2> (x)", 15));
  expect_cuda_matches_cpu(model("float[2,3,5] x", "int64 y", "y = Size (x)"));
  expect_cuda_matches_cpu(
      model("float[2,3] x", "float[2,3] y",
            "s = Shape (x)\n  c = ConstantOfShape <value = float[1] {1.5}> (s)\n"
            "  y = Add (x, c)"));
  expect_cuda_matches_cpu(model("int64[4] x", "int64[4] y",
                                "s = Shape (x)\n  c = ConstantOfShape <value = int64[1] {3}> (s)\n"
                                "  y = Add (x, c)"));
}

}  // namespace
}  // namespace xopt
