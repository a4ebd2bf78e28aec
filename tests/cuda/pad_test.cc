// Pad and Trilu on the GPU against the CPU reference (bit-exact): every mode, crops (negative
// pads), pads wider than the dim (periodic reflect / wrap), axes (opset 18), the attribute form
// (opset 2), a constant value, integer data.
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

TEST(CudaPad, Modes) {
  const std::string pads = "int64[4] p = {1, 2, 3, 0}";  // [2,5] -> [6,7]
  expect_cuda_matches_cpu(
      model("float[2,5] x", "float[6,7] y", "y = Pad (x, p, v)", 13, pads + ", float v = {1.5}"));
  expect_cuda_matches_cpu(model("float[2,5] x", "float[6,7] y", "y = Pad (x, p)", 13, pads));
  expect_cuda_matches_cpu(
      model("float[2,5] x", "float[6,7] y", "y = Pad <mode = \"edge\"> (x, p)", 13, pads));
  expect_cuda_matches_cpu(
      model("float[2,5] x", "float[6,7] y", "y = Pad <mode = \"reflect\"> (x, p)", 13, pads));
  expect_cuda_matches_cpu(
      model("float[2,5] x", "float[6,7] y", "y = Pad <mode = \"wrap\"> (x, p)", 19, pads));
}

TEST(CudaPad, RuntimeValue) {
  test::CudaCase c;
  c.inputs["v"] = ir::Tensor::of<float>({1}, {-3.5f});
  expect_cuda_matches_cpu(model("float[2,5] x, float[1] v", "float[6,7] y", "y = Pad (x, p, v)", 13,
                                "int64[4] p = {1, 2, 3, 0}"),
                          c);
}

TEST(CudaPad, CropsAxesAndAttributes) {
  // Negative pads crop first.
  expect_cuda_matches_cpu(model("float[4,6] x", "float[4,5] y",
                                "y = Pad <mode = \"reflect\"> (x, p)", 13,
                                "int64[4] p = {-1, 2, 1, -3}"));
  // NCHW spatial padding through axes.
  expect_cuda_matches_cpu(model("float[1,2,4,4] x", "float[1,2,6,8] y", "y = Pad (x, p, , a)", 18,
                                "int64[4] p = {1, 2, 1, 2}, int64[2] a = {2, -1}"));
  expect_cuda_matches_cpu(
      model("float[2,3] x", "float[4,7] y", "y = Pad <pads = [1, 2, 1, 2], value = 2.5> (x)", 2));
  expect_cuda_matches_cpu(model("int64[3,3] x", "int64[5,5] y", "y = Pad <mode = \"edge\"> (x, p)",
                                13, "int64[4] p = {1, 1, 1, 1}"));
}

TEST(CudaTrilu, UpperLower) {
  expect_cuda_matches_cpu(model("float[2,4,5] x", "float[2,4,5] y", "y = Trilu (x)", 14));
  expect_cuda_matches_cpu(model("float[2,4,5] x", "float[2,4,5] y", "y = Trilu <upper = 0> (x, k)",
                                14, "int64 k = {-1}"));
  expect_cuda_matches_cpu(
      model("int64[5,3] x", "int64[5,3] y", "y = Trilu (x, k)", 14, "int64 k = {2}"));
}

}  // namespace
}  // namespace xopt
