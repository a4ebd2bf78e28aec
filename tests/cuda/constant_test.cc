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

// Shape-defining inputs produced by Constant nodes (a model that was not folded) are read at
// compile time like initializers.
TEST(CudaConstant, FeedsShapeInputs) {
  expect_cuda_matches_cpu(model("float[4,10] x", "float[4,3] y",
                                "s = Constant <value_ints = [8]> ()\n"
                                "  e = Constant <value_ints = [1]> ()\n"
                                "  a = Constant <value_ints = [1]> ()\n"
                                "  t = Constant <value_ints = [-3]> ()\n"
                                "  y = Slice (x, s, e, a, t)",
                                13));
  expect_cuda_matches_cpu(model("float[3,4,5] x", "float[3,1,5] y",
                                "a = Constant <value = int64[1] {1}> ()\n  y = ReduceSum (x, a)",
                                13));
  expect_cuda_matches_cpu(model("float[1,2,3,4] x", "float[1,2,6,8] y",
                                "s = Constant <value_floats = [1.0, 1.0, 2.0, 2.0]> ()\n"
                                "  y = Resize <mode = \"linear\"> (x, , s)",
                                13));
}

}  // namespace
}  // namespace xopt
