// Resize and Upsample on the GPU against the CPU reference: nearest (every nearest_mode), cubic and
// linear, every coordinate_transformation_mode, up- and downsampling, scales and sizes, axes and
// keep_aspect_ratio_policy (18), exclude_outside, tf_crop_and_resize with extrapolation, the
// legacy forms (Resize-10, Upsample).
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

const char* kUp = "float[4] s = {1, 1, 2, 1.5}";      // [1,2,5,6] -> [1,2,10,9]
const char* kDown = "float[4] s = {1, 1, 0.6, 0.5}";  // [1,2,5,6] -> [1,2,3,3]

void both(const std::string& attrs, int opset = 13) {
  SCOPED_TRACE(attrs);
  expect_cuda_matches_cpu(model("float[1,2,5,6] x", "float[1,2,10,9] y",
                                "y = Resize " + attrs + " (x, , s)", opset, kUp));
  expect_cuda_matches_cpu(model("float[1,2,5,6] x", "float[1,2,3,3] y",
                                "y = Resize " + attrs + " (x, , s)", opset, kDown));
}

TEST(CudaResize, NearestModes) {
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      both(std::string("<mode = \"nearest\", coordinate_transformation_mode = \"") + coord +
           "\", nearest_mode = \"" + nearest + "\">");
  both("<mode = \"nearest\", coordinate_transformation_mode = \"half_pixel_symmetric\">", 19);
}

TEST(CudaResize, LinearModes) {
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"})
    both(std::string("<mode = \"linear\", coordinate_transformation_mode = \"") + coord + "\">");
  both("<mode = \"linear\", coordinate_transformation_mode = \"half_pixel_symmetric\">", 19);
  both("<mode = \"linear\", exclude_outside = 1>");
}

TEST(CudaResize, CubicModes) {
  both("<mode = \"cubic\">");
  both("<mode = \"cubic\", cubic_coeff_a = -0.5, exclude_outside = 1>");
  both("<mode = \"cubic\", coordinate_transformation_mode = \"align_corners\">");
  both("<mode = \"cubic\", coordinate_transformation_mode = \"asymmetric\">");
  both("<mode = \"cubic\", coordinate_transformation_mode = \"pytorch_half_pixel\">");
}

TEST(CudaResize, SizesAxesPolicy) {
  expect_cuda_matches_cpu(model("float[2,3,4,4] x", "float[2,3,7,9] y",
                                "y = Resize <mode = \"linear\"> (x, , , z)", 13,
                                "int64[4] z = {2, 3, 7, 9}"));
  expect_cuda_matches_cpu(model("float[1,2,4,6] x", "float[1,2,8,12] y",
                                "y = Resize <mode = \"nearest\", axes = [2, 3]> (x, , s)", 18,
                                "float[2] s = {2, 2}"));
  expect_cuda_matches_cpu(
      model("float[1,2,4,6] x", "float[1,2,5,8] y",
            "y = Resize <mode = \"linear\", axes = [-1, 2], keep_aspect_ratio_policy = "
            "\"not_larger\"> (x, , , z)",
            18, "int64[2] z = {8, 6}"));
  // A 3-D linear resize (three resized axes).
  expect_cuda_matches_cpu(model("float[1,1,3,4,5] x", "float[1,1,6,8,10] y",
                                "y = Resize <mode = \"linear\"> (x, , s)", 13,
                                "float[5] s = {1, 1, 2, 2, 2}"));
}

TEST(CudaResize, TfCropAndResize) {
  expect_cuda_matches_cpu(
      model("float[1,1,6,6] x", "float[1,1,4,5] y",
            "y = Resize <mode = \"linear\", coordinate_transformation_mode = "
            "\"tf_crop_and_resize\", extrapolation_value = 7.0> (x, r, , z)",
            13, "float[8] r = {0, 0, -0.2, 0.3, 1, 1, 0.8, 1.4}, int64[4] z = {1, 1, 4, 5}"));
}

TEST(CudaResize, Legacy) {
  expect_cuda_matches_cpu(model("float[1,2,3,4] x", "float[1,2,6,6] y",
                                "y = Resize <mode = \"nearest\"> (x, s)", 10,
                                "float[4] s = {1, 1, 2, 1.5}"));
  expect_cuda_matches_cpu(model("float[1,2,4,6] x", "float[1,2,2,3] y",
                                "y = Resize <mode = \"nearest\"> (x, s)", 10,
                                "float[4] s = {1, 1, 0.5, 0.5}"));
  expect_cuda_matches_cpu(model("float[1,2,3,4] x", "float[1,2,6,8] y",
                                "y = Resize <mode = \"linear\"> (x, s)", 10,
                                "float[4] s = {1, 1, 2, 2}"));
  expect_cuda_matches_cpu(model("float[1,2,3,4] x", "float[1,2,6,8] y",
                                "y = Upsample <mode = \"nearest\"> (x, s)", 9,
                                "float[4] s = {1, 1, 2, 2}"));
}

}  // namespace
}  // namespace xopt
