// Transpose, Expand, Tile and Slice on the GPU against the CPU reference (bit-exact): transposes
// that keep the contiguous dim (widened words) and that move it (shared-memory tiles, with partial
// tiles), integer and bool data, Slice with negative steps, clamping, axes and the opset-1 form.
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

TEST(CudaTranspose, Perms) {
  // Heads split: the last dim stays contiguous.
  expect_cuda_matches_cpu(
      model("float[2,3,4,8] x", "float[2,4,3,8] y", "y = Transpose <perm = [0, 2, 1, 3]> (x)"));
  // NCHW -> NHWC and back: tiled, with partial tiles.
  expect_cuda_matches_cpu(
      model("float[2,40,9,11] x", "float[2,9,11,40] y", "y = Transpose <perm = [0, 2, 3, 1]> (x)"));
  expect_cuda_matches_cpu(
      model("float[2,9,11,40] x", "float[2,40,9,11] y", "y = Transpose <perm = [0, 3, 1, 2]> (x)"));
  // Keys transposed for attention scores.
  expect_cuda_matches_cpu(
      model("float[1,2,33,16] x", "float[1,2,16,33] y", "y = Transpose <perm = [0, 1, 3, 2]> (x)"));
  // Default perm (reverse), small dims (no tiles).
  expect_cuda_matches_cpu(model("float[3,4,5] x", "float[5,4,3] y", "y = Transpose (x)"));
  expect_cuda_matches_cpu(model("int64[6,70] x", "int64[70,6] y", "y = Transpose (x)"));
  expect_cuda_matches_cpu(model("int64[64,70] x", "int64[70,64] y", "y = Transpose (x)"));
  expect_cuda_matches_cpu(
      model("bool[2,3,4] x", "bool[4,2,3] y", "y = Transpose <perm = [2, 0, 1]> (x)"));
}

TEST(CudaExpandTile, Shapes) {
  expect_cuda_matches_cpu(
      model("float[3,1] x", "float[2,3,4] y", "y = Expand (x, s)", 17, "int64[3] s = {2, 1, 4}"));
  expect_cuda_matches_cpu(
      model("float[1,8] x", "float[5,8] y", "y = Expand (x, s)", 17, "int64[2] s = {5, 8}"));
  expect_cuda_matches_cpu(
      model("int64[4] x", "int64[4] y", "y = Expand (x, s)", 17, "int64[1] s = {1}"));
  expect_cuda_matches_cpu(
      model("float[2,3,4] x", "float[4,3,12] y", "y = Tile (x, r)", 17, "int64[3] r = {2, 1, 3}"));
  expect_cuda_matches_cpu(
      model("int32[3] x", "int32[12] y", "y = Tile (x, r)", 17, "int64[1] r = {4}"));
}

TEST(CudaSlice, StepsAxesClamping) {
  expect_cuda_matches_cpu(model("float[10] x", "float[3] y", "y = Slice (x, s, e, a, t)", 13,
                                "int64[1] s = {8}, int64[1] e = {1}, int64[1] a = {0}, "
                                "int64[1] t = {-3}"));
  expect_cuda_matches_cpu(model("float[4,10,6] x", "float[4,3,2] y", "y = Slice (x, s, e, a, t)",
                                13,
                                "int64[2] s = {1, -1}, int64[2] e = {7, -100}, "
                                "int64[2] a = {1, -1}, int64[2] t = {2, -3}"));
  // Columns of a wide row (contiguous runs, widened words), starts/ends past the dims.
  expect_cuda_matches_cpu(model("float[3,64] x", "float[3,32] y", "y = Slice (x, s, e, a)", 13,
                                "int64[1] s = {16}, int64[1] e = {48}, int64[1] a = {1}"));
  expect_cuda_matches_cpu(model("float[5,6] x", "float[5,6] y", "y = Slice (x, s, e)", 13,
                                "int64[2] s = {-100, 0}, int64[2] e = {100, 1000}"));
  expect_cuda_matches_cpu(model("int64[8] x", "int64[4] y", "y = Slice (x, s, e)", 13,
                                "int64[1] s = {2}, int64[1] e = {6}"));
  expect_cuda_matches_cpu(
      model("float[6,8] x", "float[2,8] y", "y = Slice <starts = [1], ends = [3]> (x)", 9));
  expect_cuda_matches_cpu(model("float[6,8] x", "float[6,3] y",
                                "y = Slice <starts = [-3], ends = [8], axes = [1]> (x)", 9));
}

}  // namespace
}  // namespace xopt
