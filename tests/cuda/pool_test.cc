// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool on the GPU against the CPU reference:
// windows cuDNN pooling runs (symmetric pads) and those the direct kernel runs (ceil_mode past the
// padding, SAME_* with an odd total pad, dilations), count_include_pad both ways, 1-D to 3-D.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& input, const std::string& output, const std::string& node,
                  int opset = 17) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + input +
         ") => (" + output + ") {\n  " + node + "\n}";
}

TEST(CudaMaxPool, TwoByTwoStride2) {
  expect_cuda_matches_cpu(model("float[1,3,8,8] x", "float[1,3,4,4] y",
                                "y = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (x)"));
}

TEST(CudaMaxPool, PadsBatch) {
  expect_cuda_matches_cpu(
      model("float[2,4,9,9] x", "float[2,4,5,5] y",
            "y = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (x)"));
}

TEST(CudaMaxPool, CeilMode) {
  expect_cuda_matches_cpu(
      model("float[1,2,7,7] x", "float[1,2,4,4] y",
            "y = MaxPool <kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1> (x)"));
}

TEST(CudaMaxPool, SameUpperAsymmetric) {
  expect_cuda_matches_cpu(model(
      "float[1,2,8,8] x", "float[1,2,4,4] y",
      "y = MaxPool <kernel_shape = [3, 3], strides = [2, 2], auto_pad = \"SAME_UPPER\"> (x)"));
}

TEST(CudaMaxPool, Dilations) {
  expect_cuda_matches_cpu(model("float[1,2,7,7] x", "float[1,2,5,5] y",
                                "y = MaxPool <kernel_shape = [2, 2], dilations = [2, 2]> (x)"));
}

TEST(CudaMaxPool, OneD) {
  expect_cuda_matches_cpu(model("float[1,3,10] x", "float[1,3,10] y",
                                "y = MaxPool <kernel_shape = [3], pads = [1, 1]> (x)"));
}

TEST(CudaMaxPool, ThreeD) {
  expect_cuda_matches_cpu(model("float[1,2,6,6,6] x", "float[1,2,3,3,3] y",
                                "y = MaxPool <kernel_shape = [2, 2, 2], strides = [2, 2, 2]> (x)"));
}

TEST(CudaAveragePool, ExcludePad) {
  expect_cuda_matches_cpu(
      model("float[1,3,6,6] x", "float[1,3,6,6] y",
            "y = AveragePool <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (x)"));
}

TEST(CudaAveragePool, IncludePad) {
  expect_cuda_matches_cpu(model(
      "float[1,3,6,6] x", "float[1,3,6,6] y",
      "y = AveragePool <kernel_shape = [3, 3], pads = [1, 1, 1, 1], count_include_pad = 1> (x)"));
}

TEST(CudaAveragePool, CeilModeIncludePad) {
  // The last window runs past the end padding: the divisor counts only taps inside it.
  expect_cuda_matches_cpu(
      model("float[1,2,6,6] x", "float[1,2,4,4] y",
            "y = AveragePool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], "
            "ceil_mode = 1, count_include_pad = 1> (x)"));
}

TEST(CudaAveragePool, SameLowerIncludePad) {
  expect_cuda_matches_cpu(model("float[1,2,5,5] x", "float[1,2,5,5] y",
                                "y = AveragePool <kernel_shape = [2, 2], auto_pad = "
                                "\"SAME_LOWER\", count_include_pad = 1> (x)"));
}

TEST(CudaAveragePool, Dilations) {
  expect_cuda_matches_cpu(model("float[1,2,8,8] x", "float[1,2,6,6] y",
                                "y = AveragePool <kernel_shape = [2, 2], dilations = [2, 2]> (x)",
                                /*opset=*/19));
}

TEST(CudaAveragePool, OneDAndThreeD) {
  expect_cuda_matches_cpu(model("float[1,2,9] x", "float[1,2,4] y",
                                "y = AveragePool <kernel_shape = [3], strides = [2]> (x)"));
  expect_cuda_matches_cpu(
      model("float[1,2,4,4,4] x", "float[1,2,2,2,2] y",
            "y = AveragePool <kernel_shape = [2, 2, 2], strides = [2, 2, 2]> (x)"));
}

TEST(CudaGlobalPool, AverageAndMax) {
  expect_cuda_matches_cpu(
      model("float[2,8,7,7] x", "float[2,8,1,1] y", "y = GlobalAveragePool (x)"));
  expect_cuda_matches_cpu(model("float[1,4,5,6] x", "float[1,4,1,1] y", "y = GlobalMaxPool (x)"));
  expect_cuda_matches_cpu(model("float[1,3,10] x", "float[1,3,1] y", "y = GlobalAveragePool (x)"));
  expect_cuda_matches_cpu(
      model("float[1,2,3,4,5] x", "float[1,2,1,1,1] y", "y = GlobalMaxPool (x)"));
}

}  // namespace
}  // namespace xopt
