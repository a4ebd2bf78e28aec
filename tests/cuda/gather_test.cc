// Gather and GatherElements on the GPU against the CPU reference (bit-exact): indices computed at
// run time (read on the device) and constant, int64 and int32, negative, any axis, scalar indices,
// integer data, an embedding-shaped lookup (widened words).
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::CudaCase;
using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 13, const std::string& inits = "") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + inputs +
         ") => (" + outputs + ") " + (inits.empty() ? "" : "<" + inits + "> ") + "{\n  " + body +
         "\n}";
}

TEST(CudaGather, RuntimeIndices) {
  // Random indices in [0, 4).
  expect_cuda_matches_cpu(
      model("float[10,8] x, int64[3,4] i", "float[3,4,8] y", "y = Gather <axis = 0> (x, i)"));
  expect_cuda_matches_cpu(
      model("float[2,5,3] x, int32[6] i", "float[2,6,3] y", "y = Gather <axis = 1> (x, i)"));
  expect_cuda_matches_cpu(
      model("int64[4,6] x, int64[2] i", "int64[4,2] y", "y = Gather <axis = -1> (x, i)"));
  // Embedding lookup: rows of 64 floats.
  expect_cuda_matches_cpu(
      model("float[50,64] x, int64[2,7] i", "float[2,7,64] y", "y = Gather (x, i)"));
  // Negative indices given explicitly.
  CudaCase c;
  c.inputs["i"] = ir::Tensor::of<int64_t>({5}, {-1, 0, -10, 9, 3});
  expect_cuda_matches_cpu(model("float[10,3] x, int64[5] i", "float[5,3] y", "y = Gather (x, i)"),
                          c);
}

TEST(CudaGather, ConstantIndices) {
  expect_cuda_matches_cpu(model("float[4,6,5] x", "float[4,2,5] y", "y = Gather <axis = 1> (x, i)",
                                13, "int32[2] i = {-1, 2}"));
  expect_cuda_matches_cpu(model("float[4,6,5] x", "float[4,5] y", "y = Gather <axis = 1> (x, i)",
                                13, "int64 i = {-6}"));
}

TEST(CudaGatherElements, Axes) {
  expect_cuda_matches_cpu(
      model("float[3,4] x, int64[3,5] i", "float[3,5] y", "y = GatherElements <axis = 1> (x, i)"));
  expect_cuda_matches_cpu(model("float[4,3,2] x, int64[2,3,2] i", "float[2,3,2] y",
                                "y = GatherElements <axis = 0> (x, i)"));
  expect_cuda_matches_cpu(
      model("int64[4,4] x, int32[2,4] i", "int64[2,4] y", "y = GatherElements <axis = -2> (x, i)"));
  CudaCase c;
  c.inputs["i"] = ir::Tensor::of<int64_t>({2, 2}, {-1, 0, 2, -3});
  expect_cuda_matches_cpu(
      model("float[2,3] x, int64[2,2] i", "float[2,2] y", "y = GatherElements <axis = 1> (x, i)"),
      c);
}

}  // namespace
}  // namespace xopt
