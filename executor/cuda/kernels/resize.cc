// Resize (opsets 10+) and Upsample (7-10) on the GPU, float32, float16 or bfloat16, nearest, linear
// and cubic. Scales, sizes and roi must be constants. Antialias is refused. Semantics follow
// executor/cpu/kernels/nn_resize.cc (which the per-axis plan here mirrors line by line).
#include <algorithm>
#include <cmath>
#include <optional>

#include "executor/cuda/kernels/compile_util.h"
#include "executor/cuda/kernels/resize.cuh"

namespace xopt::cuda {
namespace {

Status read_attrs(const CompileContext& ctx, bool legacy, ResizePlan* p) {
  const ir::Node& node = ctx.node();
  p->legacy = legacy;
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode == "nearest")
    p->linear = false;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear")
    p->linear = true;
  else if (mode == "cubic" && !legacy)
    p->cubic = true;
  else
    return ctx.error("unknown mode '" + mode + "'");
  if (legacy) {
    p->coord = ResizeCoord::kAsymmetric;
    return Status::ok();
  }
  const std::string coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel")
    p->coord = ResizeCoord::kHalfPixel;
  else if (coord == "half_pixel_symmetric" && ctx.opset() >= 19)
    p->coord = ResizeCoord::kHalfPixelSymmetric;
  else if (coord == "pytorch_half_pixel")
    p->coord = ResizeCoord::kPytorchHalfPixel;
  else if (coord == "align_corners")
    p->coord = ResizeCoord::kAlignCorners;
  else if (coord == "asymmetric")
    p->coord = ResizeCoord::kAsymmetric;
  else if (coord == "tf_crop_and_resize")
    p->coord = ResizeCoord::kTfCropAndResize;
  else
    return ctx.error("unknown coordinate_transformation_mode '" + coord + "'");
  const std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor")
    p->nearest = ResizeNearest::kRoundPreferFloor;
  else if (nearest == "round_prefer_ceil")
    p->nearest = ResizeNearest::kRoundPreferCeil;
  else if (nearest == "floor")
    p->nearest = ResizeNearest::kFloor;
  else if (nearest == "ceil")
    p->nearest = ResizeNearest::kCeil;
  else
    return ctx.error("unknown nearest_mode '" + nearest + "'");
  p->exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  p->cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  p->extrapolation = node.attr_float("extrapolation_value", 0.0f);
  if (ctx.opset() >= 18 && node.attr_int("antialias", 0) != 0)
    return ctx.unsupported("antialiased Resize is not supported on the GPU");
  return Status::ok();
}

// A constant input that is present and not empty (nullptr otherwise); an error when it is present
// but computed at run time.
Result<std::optional<ir::Tensor>> present_constant(const CompileContext& ctx, size_t i,
                                                   const char* what) {
  const DeviceTensor* t = ctx.input(i);
  if (t == nullptr || t->numel() == 0) return std::optional<ir::Tensor>();
  std::optional<ir::Tensor> c = known_value(ctx, i);
  if (!c) return ctx.unsupported(std::string("input '") + what + "' must be a constant on the GPU");
  return c;
}

const ir::Tensor* ptr(const std::optional<ir::Tensor>& t) {
  return t ? &*t : nullptr;
}

std::vector<double> doubles(const std::optional<ir::Tensor>& t) {
  std::vector<double> v;
  if (!t) return v;
  for (int64_t i = 0; i < t->numel(); ++i) v.push_back(t->as_double(i));
  return v;
}

Result<Launch> resize_impl(CompileContext& ctx, ResizePlan p, const std::vector<double>& scales_in,
                           const ir::Tensor* sizes_t, const ir::Tensor* roi_t) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  XOPT_RETURN_IF_ERROR(same_type(ctx, x->dtype, {y}));
  const ir::Node& node = ctx.node();
  const size_t r = x->rank();
  if (r > static_cast<size_t>(kMaxDims))
    return ctx.unsupported("rank above " + std::to_string(kMaxDims));
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && node.has_attr("axes")) {
    for (int64_t a : node.attr_ints("axes")) {
      XOPT_ASSIGN_OR_RETURN(int64_t n, fix_axis(ctx, a, static_cast<int64_t>(r), "axis"));
      axes.push_back(n);
    }
  } else {
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  const size_t na = axes.size();
  std::vector<double> scale(r, 1.0);
  std::vector<int64_t> out = x->dims;
  if (!scales_in.empty() && sizes_t != nullptr)
    return ctx.error("only one of scales and sizes may be given");
  if (!scales_in.empty()) {
    if (scales_in.size() != na) return ctx.error("scales has the wrong number of entries");
    for (size_t i = 0; i < na; ++i) {
      if (!(scales_in[i] > 0)) return ctx.error("scales must be positive");
      scale[axes[i]] = scales_in[i];
      out[axes[i]] =
          static_cast<int64_t>(std::floor(scales_in[i] * static_cast<double>(x->dims[axes[i]])));
    }
  } else if (sizes_t != nullptr) {
    std::vector<int64_t> sizes = sizes_t->to_int64_vector();
    if (sizes.size() != na) return ctx.error("sizes has the wrong number of entries");
    for (size_t i = 0; i < na; ++i) {
      if (sizes[i] < 0) return ctx.error("sizes must be non-negative");
      out[axes[i]] = sizes[i];
      scale[axes[i]] = static_cast<double>(sizes[i]) / static_cast<double>(x->dims[axes[i]]);
    }
    const std::string policy =
        ctx.opset() >= 18 ? node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
    if (policy == "not_larger" || policy == "not_smaller") {
      double s = scale[axes[0]];
      for (int64_t a : axes)
        s = policy == "not_larger" ? std::min(s, scale[a]) : std::max(s, scale[a]);
      for (int64_t a : axes) {
        scale[a] = s;
        out[a] = static_cast<int64_t>(s * static_cast<double>(x->dims[a]) + 0.5);
      }
    } else if (policy != "stretch") {
      return ctx.error("unknown keep_aspect_ratio_policy '" + policy + "'");
    }
  } else {
    return ctx.error("one of scales and sizes must be given");
  }
  std::vector<double> roi_start(r, 0.0), roi_end(r, 1.0);
  if (p.coord == ResizeCoord::kTfCropAndResize) {
    if (roi_t == nullptr) return ctx.error("tf_crop_and_resize needs the roi input");
    if (static_cast<size_t>(roi_t->numel()) != 2 * na)
      return ctx.error("roi has the wrong number of entries");
    for (size_t i = 0; i < na; ++i) {
      roi_start[axes[i]] = roi_t->as_double(static_cast<int64_t>(i));
      roi_end[axes[i]] = roi_t->as_double(static_cast<int64_t>(na + i));
    }
  }
  if (out != y->dims)
    return ctx.error("output dims " + ir::dims_string(y->dims) + " expected " +
                     ir::dims_string(out));
  p.rank = static_cast<int>(r);
  p.numel = y->numel();
  const auto st = contiguous_strides(x->dims);
  for (size_t d = 0; d < r; ++d) {
    ResizeAxis& a = p.axis[d];
    a.in = x->dims[d];
    a.out = out[d];
    a.scale = scale[d];
    a.roi_start = roi_start[d];
    a.roi_end = roi_end[d];
    p.in_strides[d] = st[d];
    const bool listed = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    const bool identity = std::abs(scale[d] - 1.0) <= 1e-9 && out[d] == x->dims[d] &&
                          std::abs(roi_start[d]) <= 1e-9 && std::abs(roi_end[d] - 1.0) <= 1e-9;
    a.resized = listed && !identity;
    if (a.resized && a.in == 0 && a.out > 0)
      return ctx.error("cannot resize an empty axis to a non-empty one");
  }
  if (p.numel == 0) return no_op_launch();
  const void* px = x->data;
  void* py = y->data;
  return Launch(
      [=](const LaunchEnv& env) { return check_launch(launch_resize(et, px, py, p, env.stream)); });
}

Result<Launch> resize(CompileContext& ctx) {
  const bool legacy = ctx.opset() < 11;
  ResizePlan p;
  XOPT_RETURN_IF_ERROR(read_attrs(ctx, legacy, &p));
  if (legacy) {
    XOPT_ASSIGN_OR_RETURN(auto scales, present_constant(ctx, 1, "scales"));
    if (!scales) return ctx.error("scales input is required");
    return resize_impl(ctx, p, doubles(scales), nullptr, nullptr);
  }
  // roi matters only for tf_crop_and_resize (elsewhere it may even be computed at run time).
  std::optional<ir::Tensor> roi;
  if (p.coord == ResizeCoord::kTfCropAndResize) {
    XOPT_ASSIGN_OR_RETURN(roi, present_constant(ctx, 1, "roi"));
  }
  XOPT_ASSIGN_OR_RETURN(auto scales, present_constant(ctx, 2, "scales"));
  XOPT_ASSIGN_OR_RETURN(auto sizes, present_constant(ctx, 3, "sizes"));
  return resize_impl(ctx, p, doubles(scales), ptr(sizes), ptr(roi));
}

Result<Launch> upsample(CompileContext& ctx) {
  ResizePlan p;
  XOPT_RETURN_IF_ERROR(read_attrs(ctx, true, &p));
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    for (float s : ctx.node().attr_floats("scales")) scales.push_back(s);
  } else {
    XOPT_ASSIGN_OR_RETURN(auto t, present_constant(ctx, 1, "scales"));
    scales = doubles(t);
  }
  if (scales.empty()) return ctx.error("scales are required");
  for (double s : scales)
    if (s < 1) return ctx.error("Upsample scales must be >= 1");
  return resize_impl(ctx, p, scales, nullptr, nullptr);
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Resize", 10, kLastOpset, resize, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Upsample", 7, 10, upsample, kFloatTypes);

}  // namespace xopt::cuda
