// Resize (nearest, linear and cubic, any rank, every coordinate_transformation_mode and
// nearest_mode of the CPU kernel, exclude_outside, tf_crop_and_resize extrapolation) and Upsample,
// float32. Each output element computes its taps per resized axis in double exactly as
// executor/cpu/kernels/nn_resize.cc plans them, and sums weight products in double.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

enum class ResizeCoord : int {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfCropAndResize,
};
enum class ResizeNearest : int { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeAxis {
  int64_t in = 0;
  int64_t out = 0;
  double scale = 1.0;
  double roi_start = 0.0;
  double roi_end = 1.0;
  bool resized = false;  // false: the output coordinate is the input one
};

struct ResizePlan {
  int rank = 0;
  bool linear = false;  // else nearest (or cubic)
  bool cubic = false;
  double cubic_a = -0.75;
  bool legacy = false;  // Upsample / Resize-10 nearest: floor when upsampling, ceil when not
  bool exclude_outside = false;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  float extrapolation = 0.0f;
  int64_t numel = 0;
  int64_t in_strides[kMaxDims] = {};
  ResizeAxis axis[kMaxDims];
};

// x and y of float type `t` (float32, float16, bfloat16; interpolated in double).
cudaError_t launch_resize(ElemType t, const void* x, void* y, const ResizePlan& plan,
                          cudaStream_t stream);

}  // namespace xopt::cuda
