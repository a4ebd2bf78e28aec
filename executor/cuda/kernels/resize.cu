// Resize kernel (see resize.cuh). Coordinates are computed with explicitly rounded double
// operations (no fused multiply-add) so that the taps chosen equal the CPU reference's.
#include <cmath>
#include <cstdint>

#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/lowp.cuh"
#include "executor/cuda/kernels/resize.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;
using dev::kThreads;

// Source coordinate of output index y (nn_resize.cc: source_coord).
__device__ double source_coord(const ResizePlan& p, const ResizeAxis& a, double y, bool* extra) {
  const double in_w = static_cast<double>(a.in);
  const double out_w = __dmul_rn(a.scale, in_w);
  *extra = false;
  switch (p.coord) {
    case ResizeCoord::kAlignCorners:
      return out_w == 1 ? 0.0
                        : __ddiv_rn(__dmul_rn(y, __dsub_rn(in_w, 1.0)), __dsub_rn(out_w, 1.0));
    case ResizeCoord::kAsymmetric:
      return __ddiv_rn(y, a.scale);
    case ResizeCoord::kTfCropAndResize: {
      const double span = __dsub_rn(a.roi_end, a.roi_start);
      double x = out_w == 1 ? __ddiv_rn(__dmul_rn(span, __dsub_rn(in_w, 1.0)), 2.0)
                            : __ddiv_rn(__dmul_rn(__dmul_rn(y, span), __dsub_rn(in_w, 1.0)),
                                        __dsub_rn(out_w, 1.0));
      x = __dadd_rn(x, __dmul_rn(a.roi_start, __dsub_rn(in_w, 1.0)));
      *extra = x < 0 || x > in_w - 1;
      return x;
    }
    case ResizeCoord::kPytorchHalfPixel:
      return out_w == 1 ? -0.5 : __dsub_rn(__ddiv_rn(__dadd_rn(y, 0.5), a.scale), 0.5);
    case ResizeCoord::kHalfPixelSymmetric: {
      const double adjustment = __ddiv_rn(static_cast<double>(a.out), out_w);
      const double offset = __dmul_rn(__ddiv_rn(in_w, 2.0), __dsub_rn(1.0, adjustment));
      return __dsub_rn(__dadd_rn(offset, __ddiv_rn(__dadd_rn(y, 0.5), a.scale)), 0.5);
    }
    case ResizeCoord::kHalfPixel:
    default:
      return __dsub_rn(__ddiv_rn(__dadd_rn(y, 0.5), a.scale), 0.5);
  }
}

// The cubic convolution kernel (nn_resize.cc: cubic_kernel).
__device__ double cubic_kernel(double x, double a) {
  x = fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Taps of output coordinate o along axis a: up to four input indices and weights; returns their
// number. *extra is set for tf_crop_and_resize outside the input.
__device__ int axis_taps(const ResizePlan& p, const ResizeAxis& a, int64_t o, int64_t* idx,
                         double* w, bool* extra) {
  *extra = false;
  if (!a.resized) {
    idx[0] = o;
    w[0] = 1.0;
    return 1;
  }
  const int64_t last = a.in - 1;
  if (p.legacy && !p.linear) {
    const double x = __ddiv_rn(static_cast<double>(o), a.scale);
    int64_t i = static_cast<int64_t>(a.scale < 1 ? ceil(x) : floor(x));
    idx[0] = i < 0 ? 0 : (i > last ? last : i);
    w[0] = 1.0;
    return 1;
  }
  const double x = source_coord(p, a, static_cast<double>(o), extra);
  const double fl = floor(x);
  const double ratio = x == fl ? 1.0 : __dsub_rn(x, fl);
  if (p.cubic) {
    double c[4] = {cubic_kernel(ratio + 1, p.cubic_a), cubic_kernel(ratio, p.cubic_a),
                   cubic_kernel(1 - ratio, p.cubic_a), cubic_kernel(2 - ratio, p.cubic_a)};
    const int64_t start = static_cast<int64_t>(fl) + (x - fl == 0 ? -2 : -1);
    if (p.exclude_outside) {
      double sum = 0;
      for (int j = 0; j < 4; ++j) {
        if (start + j < 0 || start + j > last) c[j] = 0;
        sum += c[j];
      }
      if (sum != 0)
        for (int j = 0; j < 4; ++j) c[j] /= sum;
    }
    for (int j = 0; j < 4; ++j) {
      const int64_t i = start + j;
      idx[j] = i < 0 ? 0 : (i > last ? last : i);
      w[j] = c[j];
    }
    return 4;
  }
  double c0, c1;
  if (p.linear) {
    c0 = __dsub_rn(1.0, ratio);
    c1 = ratio;
  } else if (ratio == 1.0) {
    c0 = 0.0;
    c1 = 1.0;
  } else {
    switch (p.nearest) {
      case ResizeNearest::kRoundPreferFloor:
        c0 = ratio <= 0.5 ? 1.0 : 0.0;
        c1 = ratio > 0.5 ? 1.0 : 0.0;
        break;
      case ResizeNearest::kRoundPreferCeil:
        c0 = ratio < 0.5 ? 1.0 : 0.0;
        c1 = ratio >= 0.5 ? 1.0 : 0.0;
        break;
      case ResizeNearest::kFloor:
        c0 = 1.0;
        c1 = 0.0;
        break;
      case ResizeNearest::kCeil:
      default:
        c0 = 0.0;
        c1 = 1.0;
        break;
    }
  }
  const int64_t base = static_cast<int64_t>(fl);
  const int64_t start = base + (x - fl == 0 ? -1 : 0);
  if (p.exclude_outside) {
    if (start < 0 || start > last) c0 = 0;
    if (start + 1 < 0 || start + 1 > last) c1 = 0;
    const double sum = __dadd_rn(c0, c1);
    if (sum != 0) {
      c0 = __ddiv_rn(c0, sum);
      c1 = __ddiv_rn(c1, sum);
    }
  }
  const int64_t i0 = start, i1 = start + 1;
  idx[0] = i0 < 0 ? 0 : (i0 > last ? last : i0);
  idx[1] = i1 < 0 ? 0 : (i1 > last ? last : i1);
  w[0] = c0;
  w[1] = c1;
  return 2;
}

template <typename T>
__global__ void resize_kernel(const T* x, T* y, ResizePlan p) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.numel;
       i += stride) {
    int64_t idx[kMaxDims][4];
    double w[kMaxDims][4];
    int taps[kMaxDims];
    bool extrapolated = false;
    int64_t r = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t o = r % p.axis[d].out;
      r /= p.axis[d].out;
      bool e = false;
      taps[d] = axis_taps(p, p.axis[d], o, idx[d], w[d], &e);
      extrapolated = extrapolated || e;
    }
    if (extrapolated) {
      y[i] = dev::store<T>(p.extrapolation);
      continue;
    }
    int corners = 1;
    for (int d = 0; d < p.rank; ++d) corners *= taps[d];
    double acc = 0.0;
    for (int c = 0; c < corners; ++c) {
      int t = c;
      double wt = 1.0;
      int64_t off = 0;
      for (int d = p.rank - 1; d >= 0; --d) {
        const int j = t % taps[d];
        t /= taps[d];
        wt *= w[d][j];
        off += idx[d][j] * p.in_strides[d];
      }
      if (wt != 0.0) acc += wt * static_cast<double>(dev::load(x[off]));
    }
    y[i] = dev::store<T>(static_cast<float>(acc));
  }
}

}  // namespace

cudaError_t launch_resize(ElemType t, const void* x, void* y, const ResizePlan& p, cudaStream_t s) {
  if (p.numel == 0) return cudaSuccess;
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    resize_kernel<<<grid_for(p.numel), kThreads, 0, s>>>(static_cast<const T*>(x),
                                                         static_cast<T*>(y), p);
    return cudaGetLastError();
  });
}

}  // namespace xopt::cuda
