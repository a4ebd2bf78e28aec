// Conv, com.microsoft FusedConv and ConvTranspose on the GPU (cuDNN) against the CPU reference:
// groups and depthwise, strides, dilations, explicit symmetric and asymmetric pads, every auto_pad,
// 1-D, 2-D and 3-D, every FusedConv activation with and without the residual Z.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& output, const std::string& node,
                  int opset = 17) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         ", \"com.microsoft\" : 1]>\ng (" + inputs + ") => (" + output + ") {\n  " + node + "\n}";
}

TEST(CudaConv, PadsAndBias) {
  expect_cuda_matches_cpu(model("float[1,3,8,8] x, float[4,3,3,3] w, float[4] b",
                                "float[1,4,8,8] y", "y = Conv <pads = [1, 1, 1, 1]> (x, w, b)"));
}

TEST(CudaConv, StridesDilationsBatch) {
  expect_cuda_matches_cpu(model("float[2,4,11,11] x, float[6,4,3,3] w", "float[2,6,4,4] y",
                                "y = Conv <strides = [2, 2], dilations = [2, 2]> (x, w)"));
}

TEST(CudaConv, DepthwiseSameUpperStride2) {
  // in 8, kernel 3, stride 2: total pad 1, all at the end (asymmetric).
  expect_cuda_matches_cpu(
      model("float[1,8,8,8] x, float[8,1,3,3] w, float[8] b", "float[1,8,4,4] y",
            "y = Conv <group = 8, strides = [2, 2], auto_pad = \"SAME_UPPER\"> (x, w, b)"));
}

TEST(CudaConv, GroupedSameLower) {
  // Even kernel, stride 1: total pad 1, at the beginning.
  expect_cuda_matches_cpu(model("float[1,4,7,7] x, float[6,2,2,2] w", "float[1,6,7,7] y",
                                "y = Conv <group = 2, auto_pad = \"SAME_LOWER\"> (x, w)"));
}

TEST(CudaConv, ExplicitAsymmetricPads) {
  expect_cuda_matches_cpu(model("float[1,3,6,7] x, float[5,3,3,3] w, float[5] b",
                                "float[1,5,6,6] y", "y = Conv <pads = [0, 1, 2, 0]> (x, w, b)"));
}

TEST(CudaConv, Valid) {
  expect_cuda_matches_cpu(model("float[1,3,9,9] x, float[2,3,4,4] w", "float[1,2,3,3] y",
                                "y = Conv <strides = [2, 2], auto_pad = \"VALID\"> (x, w)"));
}

TEST(CudaConv, OneD) {
  expect_cuda_matches_cpu(
      model("float[2,3,20] x, float[4,3,5] w, float[4] b", "float[2,4,9] y",
            "y = Conv <strides = [2], dilations = [2], pads = [3, 3]> (x, w, b)"));
}

TEST(CudaConv, OneDSameUpperEvenKernel) {
  expect_cuda_matches_cpu(model("float[1,2,10] x, float[3,2,4] w", "float[1,3,10] y",
                                "y = Conv <auto_pad = \"SAME_UPPER\"> (x, w)"));
}

TEST(CudaConv, ThreeD) {
  expect_cuda_matches_cpu(
      model("float[1,2,5,6,7] x, float[3,2,3,3,3] w, float[3] b", "float[1,3,5,3,4] y",
            "y = Conv <pads = [1, 1, 1, 1, 1, 1], strides = [1, 2, 2]> (x, w, b)"));
}

TEST(CudaConv, ThreeDGroupedAsymmetric) {
  expect_cuda_matches_cpu(model("float[1,4,4,4,4] x, float[4,2,2,2,2] w", "float[1,4,4,4,4] y",
                                "y = Conv <group = 2, auto_pad = \"SAME_UPPER\"> (x, w)"));
}

TEST(CudaConv, NoGraphReplay) {
  test::CudaCase c;
  c.use_graph = false;
  expect_cuda_matches_cpu(model("float[1,3,8,8] x, float[4,3,3,3] w, float[4] b",
                                "float[1,4,8,8] y", "y = Conv <pads = [1, 1, 1, 1]> (x, w, b)"),
                          c);
}

// FusedConv: every activation, with and without Z (and Relu without a bias, which cannot take
// cuDNN's fused call).
struct Act {
  const char* name;
  const char* attrs;
};
const Act kActivations[] = {
    {"Identity", ""},
    {"Relu", ", activation = \"Relu\""},
    {"LeakyRelu", ", activation = \"LeakyRelu\", activation_params = [0.1]"},
    {"Sigmoid", ", activation = \"Sigmoid\""},
    {"Tanh", ", activation = \"Tanh\""},
    {"Clip", ", activation = \"Clip\", activation_params = [-0.5, 0.8]"},
    {"HardSigmoid", ", activation = \"HardSigmoid\", activation_params = [0.2, 0.5]"},
};

TEST(CudaFusedConv, EveryActivationWithAndWithoutZ) {
  for (const Act& a : kActivations) {
    SCOPED_TRACE(a.name);
    const std::string attrs = std::string("pads = [1, 1, 1, 1]") + a.attrs;
    expect_cuda_matches_cpu(model("float[2,4,6,6] x, float[8,4,3,3] w, float[8] b",
                                  "float[2,8,6,6] y",
                                  "y = com.microsoft.FusedConv <" + attrs + "> (x, w, b)"));
    expect_cuda_matches_cpu(
        model("float[2,4,6,6] x, float[8,4,3,3] w, float[8] b, float[2,8,6,6] z",
              "float[2,8,6,6] y", "y = com.microsoft.FusedConv <" + attrs + "> (x, w, b, z)"));
    expect_cuda_matches_cpu(model("float[2,4,6,6] x, float[8,4,3,3] w, float[2,8,6,6] z",
                                  "float[2,8,6,6] y",
                                  "y = com.microsoft.FusedConv <" + attrs + "> (x, w, , z)"));
  }
}

TEST(CudaFusedConv, ReluBiasStride2SameUpper) {
  // cuDNN's fused conv + bias + relu on the input padded into the workspace.
  expect_cuda_matches_cpu(model(
      "float[1,4,8,8] x, float[8,4,3,3] w, float[8] b, float[1,8,4,4] z", "float[1,8,4,4] y",
      "y = com.microsoft.FusedConv <strides = [2, 2], auto_pad = \"SAME_UPPER\", activation = "
      "\"Relu\"> (x, w, b, z)"));
}

TEST(CudaFusedConv, DepthwiseClipNoBias) {
  expect_cuda_matches_cpu(
      model("float[1,6,7,7] x, float[6,1,3,3] w", "float[1,6,7,7] y",
            "y = com.microsoft.FusedConv <group = 6, pads = [1, 1, 1, 1], activation = \"Clip\", "
            "activation_params = [0.0, 6.0]> (x, w)"));
}

TEST(CudaConvTranspose, StridePadsOutputPadding) {
  expect_cuda_matches_cpu(model(
      "float[1,4,5,5] x, float[4,3,3,3] w, float[3] b", "float[1,3,10,10] y",
      "y = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]> (x, w, "
      "b)"));
}

TEST(CudaConvTranspose, Grouped) {
  expect_cuda_matches_cpu(model("float[1,4,4,4] x, float[4,2,3,3] w", "float[1,4,6,6] y",
                                "y = ConvTranspose <group = 2> (x, w)"));
}

TEST(CudaConvTranspose, OutputShapeAsymmetric) {
  // output_shape 8 of a full 9: one pad at the beginning.
  expect_cuda_matches_cpu(
      model("float[1,2,4,4] x, float[2,3,3,3] w", "float[1,3,8,8] y",
            "y = ConvTranspose <strides = [2, 2], output_shape = [8, 8]> (x, w)"));
}

TEST(CudaConvTranspose, SameUpperCropped) {
  // Output 10 of a full 11: the pad is at the end, which cuDNN cannot take (crop path).
  expect_cuda_matches_cpu(
      model("float[1,2,5,5] x, float[2,2,3,3] w, float[2] b", "float[1,2,10,10] y",
            "y = ConvTranspose <strides = [2, 2], auto_pad = \"SAME_UPPER\"> (x, w, b)"));
}

TEST(CudaConvTranspose, OutputShapeBeyondFullResult) {
  expect_cuda_matches_cpu(model("float[1,2,3,3] x, float[2,2,3,3] w", "float[1,2,7,7] y",
                                "y = ConvTranspose <output_shape = [7, 7]> (x, w)"));
}

TEST(CudaConvTranspose, OneDDilated) {
  expect_cuda_matches_cpu(model("float[1,3,7] x, float[3,2,4] w", "float[1,2,25] y",
                                "y = ConvTranspose <strides = [3], dilations = [2]> (x, w)"));
}

TEST(CudaConvTranspose, ThreeD) {
  expect_cuda_matches_cpu(model("float[1,2,3,3,3] x, float[2,2,2,2,2] w, float[2] b",
                                "float[1,2,6,6,6] y",
                                "y = ConvTranspose <strides = [2, 2, 2]> (x, w, b)"));
}

}  // namespace
}  // namespace xopt
