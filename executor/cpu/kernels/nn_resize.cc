// Resize (opsets 10-19) and Upsample (7-10). Interpolation is separable: each resized axis is done
// in turn with per-output-index taps and weights, in double, following the ONNX reference
// implementation (neighbour choice, edge clamping, exclude_outside, antialias footprints).
// Upsample and Resize-10 use onnxruntime's semantics for those opsets: asymmetric coordinates,
// nearest = floor when upsampling an axis and ceil when downsampling it, linear clamped at the
// edge.
#include <cmath>
#include <string>
#include <vector>

#include "executor/cpu/kernels/nn_util.h"

namespace xopt::exec::nn {
namespace {

struct ResizeAttrs {
  enum Mode { kNearest, kLinear, kCubic } mode = kNearest;
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
  bool legacy = false;  // Upsample, Resize-10
};

// Taps and weights of one axis: output index o reads in[idx[o*n + j]] with weight w[o*n + j].
struct AxisPlan {
  int64_t out = 0;
  int64_t n = 0;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<char> extrapolated;
};

std::vector<double> nearest_coeffs(double ratio, const std::string& mode) {
  if (ratio == 1.0) return {0, 1};  // on a sample: take it
  if (mode == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  if (mode == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
  if (mode == "floor") return {1, 0};
  return {0, 1};  // ceil
}

double cubic_kernel(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

std::vector<double> coeffs_for(const ResizeAttrs& at, double ratio, double scale) {
  switch (at.mode) {
    case ResizeAttrs::kNearest:
      return nearest_coeffs(ratio, at.nearest);
    case ResizeAttrs::kLinear: {
      if (!at.antialias) return {1 - ratio, ratio};
      const double s = std::min(scale, 1.0);
      const int64_t start = static_cast<int64_t>(std::floor(-1 / s)) + 1;
      const int64_t footprint = 2 - 2 * start;
      std::vector<double> c(static_cast<size_t>(footprint));
      double sum = 0;
      for (int64_t i = 0; i < footprint; ++i) {
        c[i] = std::clamp(1 - std::abs((static_cast<double>(start + i) - ratio) * s), 0.0, 1.0);
        sum += c[i];
      }
      for (auto& v : c) v /= sum;
      return c;
    }
    case ResizeAttrs::kCubic: {
      const double a = at.cubic_a;
      if (!at.antialias)
        return {cubic_kernel(ratio + 1, a), cubic_kernel(ratio, a), cubic_kernel(1 - ratio, a),
                cubic_kernel(2 - ratio, a)};
      const double s = std::min(scale, 1.0);
      const int64_t i_start = static_cast<int64_t>(std::floor(-2 / s)) + 1, i_end = 2 - i_start;
      std::vector<double> c;
      double sum = 0;
      for (int64_t i = i_start; i < i_end; ++i) {
        c.push_back(cubic_kernel(s * (static_cast<double>(i) - ratio), a));
        sum += c.back();
      }
      for (auto& v : c) v /= sum;
      return c;
    }
  }
  return {};
}

// Source coordinate of output index y; sets *extrapolated for tf_crop_and_resize outside the input.
double source_coord(const ResizeAttrs& at, double y, double scale, int64_t in, int64_t out,
                    double roi_start, double roi_end, bool* extrapolated) {
  const double in_w = static_cast<double>(in), out_w = scale * in_w;
  const std::string& m = at.coord;
  *extrapolated = false;
  if (m == "align_corners") return out_w == 1 ? 0.0 : y * (in_w - 1) / (out_w - 1);
  if (m == "asymmetric") return y / scale;
  if (m == "tf_crop_and_resize") {
    double x = out_w == 1 ? (roi_end - roi_start) * (in_w - 1) / 2
                          : y * (roi_end - roi_start) * (in_w - 1) / (out_w - 1);
    x += roi_start * (in_w - 1);
    *extrapolated = x < 0 || x > in_w - 1;
    return x;
  }
  if (m == "pytorch_half_pixel") return out_w == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / out_w;
    const double offset = in_w / 2 * (1 - adjustment);
    return offset + (y + 0.5) / scale - 0.5;
  }
  return (y + 0.5) / scale - 0.5;  // half_pixel
}

AxisPlan plan_axis(const ResizeAttrs& at, int64_t in, int64_t out, double scale, double roi_start,
                   double roi_end) {
  AxisPlan p;
  p.out = out;
  p.extrapolated.assign(static_cast<size_t>(out), 0);
  if (at.legacy) {
    if (at.mode == ResizeAttrs::kNearest) {
      p.n = 1;
      for (int64_t o = 0; o < out; ++o) {
        const double x = static_cast<double>(o) / scale;
        int64_t i = static_cast<int64_t>(scale < 1 ? std::ceil(x) : std::floor(x));
        p.idx.push_back(std::clamp<int64_t>(i, 0, in - 1));
        p.w.push_back(1.0);
      }
      return p;
    }
  }
  for (int64_t o = 0; o < out; ++o) {
    bool extra = false;
    const double x =
        source_coord(at, static_cast<double>(o), scale, in, out, roi_start, roi_end, &extra);
    p.extrapolated[o] = extra;
    const double fl = std::floor(x);
    const double ratio = x == fl ? 1.0 : x - fl;
    std::vector<double> c = coeffs_for(at, ratio, scale);
    const int64_t n = static_cast<int64_t>(c.size());
    if (p.n == 0) p.n = n;
    // The n samples nearest to x, ties to the smaller index (the reference's neighbour choice).
    const double frac = x - fl;
    const int64_t base = static_cast<int64_t>(fl);
    int64_t start;
    if (n % 2 == 0)
      start = base + (frac == 0 ? -(n / 2) : -(n / 2) + 1);
    else
      start = base - (n - 1) / 2 + (frac <= 0.5 ? 0 : 1);
    if (at.exclude_outside) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = start + j;
        if (i < 0 || i >= in) c[j] = 0;
        sum += c[j];
      }
      if (sum != 0)
        for (auto& v : c) v /= sum;
    }
    for (int64_t j = 0; j < n; ++j) {
      p.idx.push_back(std::clamp<int64_t>(start + j, 0, in - 1));
      p.w.push_back(c[j]);
    }
  }
  return p;
}

// Resizes `data` (dims `dims`) along `axis` with plan `p`.
std::vector<double> apply_axis(const std::vector<double>& data, std::vector<int64_t>& dims,
                               size_t axis, const AxisPlan& p, double extrapolation) {
  const int64_t outer = product(dims, 0, axis), in = dims[axis], inner = product(dims, axis + 1);
  std::vector<double> out(static_cast<size_t>(outer * p.out * inner), 0.0);
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t o = 0; o < p.out; ++o) {
      double* dst = out.data() + (a * p.out + o) * inner;
      if (p.extrapolated[o]) {
        std::fill(dst, dst + inner, extrapolation);
        continue;
      }
      for (int64_t j = 0; j < p.n; ++j) {
        const double wj = p.w[o * p.n + j];
        if (wj == 0) continue;  // so that 0 * inf never turns a nearest pick into NaN
        const double* src = data.data() + (a * in + p.idx[o * p.n + j]) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += wj * src[i];
      }
    }
  dims[axis] = p.out;
  return out;
}

Result<ResizeAttrs> read_attrs(const KernelContext& ctx, bool legacy) {
  const ir::Node& node = ctx.node();
  ResizeAttrs at;
  at.legacy = legacy;
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode == "nearest")
    at.mode = ResizeAttrs::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear")
    at.mode = ResizeAttrs::kLinear;
  else if (mode == "cubic" && !legacy)
    at.mode = ResizeAttrs::kCubic;
  else
    return ctx.error("unknown mode '" + mode + "'");
  if (legacy) {
    at.coord = "asymmetric";
    return at;
  }
  at.coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
  static const char* const kCoords[] = {"half_pixel",         "half_pixel_symmetric",
                                        "pytorch_half_pixel", "align_corners",
                                        "asymmetric",         "tf_crop_and_resize"};
  if (std::find(std::begin(kCoords), std::end(kCoords), at.coord) == std::end(kCoords) ||
      (at.coord == "half_pixel_symmetric" && ctx.opset() < 19))
    return ctx.error("unknown coordinate_transformation_mode '" + at.coord + "'");
  at.nearest = node.attr_string("nearest_mode", "round_prefer_floor");
  if (at.nearest != "round_prefer_floor" && at.nearest != "round_prefer_ceil" &&
      at.nearest != "floor" && at.nearest != "ceil")
    return ctx.error("unknown nearest_mode '" + at.nearest + "'");
  at.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  at.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  at.extrapolation = node.attr_float("extrapolation_value", 0.0f);
  at.antialias = ctx.opset() >= 18 && node.attr_int("antialias", 0) != 0;
  if (at.antialias && at.mode == ResizeAttrs::kNearest)
    return ctx.error("antialias applies to linear and cubic modes only");
  return at;
}

const ir::Tensor* present(const ir::Tensor* t) {
  return t != nullptr && t->numel() > 0 ? t : nullptr;
}

// Shared body: `scales_in`/`sizes_in`/`roi_in` as given (any may be null).
Status resize_impl(KernelContext& ctx, const ResizeAttrs& at, std::vector<double> scales_in,
                   const ir::Tensor* sizes_t, const ir::Tensor* roi_t) {
  const ir::Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  const size_t r = x.rank();
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && node.has_attr("axes")) {
    for (int64_t a : node.attr_ints("axes")) {
      if (a < -static_cast<int64_t>(r) || a >= static_cast<int64_t>(r))
        return ctx.error("axis " + std::to_string(a) + " is out of range");
      axes.push_back(a < 0 ? a + static_cast<int64_t>(r) : a);
    }
  } else {
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  const size_t na = axes.size();
  std::vector<double> scale(r, 1.0);
  std::vector<int64_t> out = x.dims();
  if (!scales_in.empty() && sizes_t != nullptr)
    return ctx.error("only one of scales and sizes may be given");
  if (!scales_in.empty()) {
    if (scales_in.size() != na)
      return ctx.error("scales has " + std::to_string(scales_in.size()) + " entries, expected " +
                       std::to_string(na));
    for (size_t i = 0; i < na; ++i) {
      if (!(scales_in[i] > 0)) return ctx.error("scales must be positive");
      scale[axes[i]] = scales_in[i];
      out[axes[i]] =
          static_cast<int64_t>(std::floor(scales_in[i] * static_cast<double>(x.dims()[axes[i]])));
    }
  } else if (sizes_t != nullptr) {
    std::vector<int64_t> sizes = sizes_t->to_int64_vector();
    if (sizes.size() != na)
      return ctx.error("sizes has " + std::to_string(sizes.size()) + " entries, expected " +
                       std::to_string(na));
    for (size_t i = 0; i < na; ++i) {
      if (sizes[i] < 0) return ctx.error("sizes must be non-negative");
      out[axes[i]] = sizes[i];
      scale[axes[i]] = static_cast<double>(sizes[i]) / static_cast<double>(x.dims()[axes[i]]);
    }
    const std::string policy =
        ctx.opset() >= 18 ? node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
    if (policy == "not_larger" || policy == "not_smaller") {
      double s = scale[axes[0]];
      for (int64_t a : axes)
        s = policy == "not_larger" ? std::min(s, scale[a]) : std::max(s, scale[a]);
      for (int64_t a : axes) {
        scale[a] = s;
        out[a] = static_cast<int64_t>(s * static_cast<double>(x.dims()[a]) + 0.5);
      }
    } else if (policy != "stretch") {
      return ctx.error("unknown keep_aspect_ratio_policy '" + policy + "'");
    }
  } else {
    return ctx.error("one of scales and sizes must be given");
  }
  std::vector<double> roi_start(r, 0.0), roi_end(r, 1.0);
  if (at.coord == "tf_crop_and_resize") {
    if (roi_t == nullptr) return ctx.error("tf_crop_and_resize needs the roi input");
    if (static_cast<size_t>(roi_t->numel()) != 2 * na)
      return ctx.error("roi has " + std::to_string(roi_t->numel()) + " entries, expected " +
                       std::to_string(2 * na));
    for (size_t i = 0; i < na; ++i) {
      roi_start[axes[i]] = roi_t->as_double(static_cast<int64_t>(i));
      roi_end[axes[i]] = roi_t->as_double(static_cast<int64_t>(na + i));
    }
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x.dtype(), out));
  std::vector<double> data(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) data[i] = x.as_double(i);
  std::vector<int64_t> dims = x.dims();
  for (int64_t a : axes) {
    const bool identity = std::abs(scale[a] - 1.0) <= 1e-9 && out[a] == dims[a] &&
                          std::abs(roi_start[a]) <= 1e-9 && std::abs(roi_end[a] - 1.0) <= 1e-9;
    if (identity) continue;
    if (dims[a] == 0 && out[a] > 0)
      return ctx.error("cannot resize an empty axis to a non-empty one");
    const AxisPlan p = plan_axis(at, dims[a], out[a], scale[a], roi_start[a], roi_end[a]);
    data = apply_axis(data, dims, static_cast<size_t>(a), p, at.extrapolation);
  }
  return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* yd = y->mutable_data<T>();
    for (size_t i = 0; i < data.size(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        const double v = std::nearbyint(data[i]);
        const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<T>::max());
        yd[i] = static_cast<T>(std::clamp(v, lo, hi));
      } else {
        yd[i] = from_compute<T>(static_cast<compute_t<T>>(data[i]));
      }
    }
    return Status::ok();
  });
}

std::vector<double> doubles(const ir::Tensor* t) {
  std::vector<double> v;
  if (t == nullptr) return v;
  for (int64_t i = 0; i < t->numel(); ++i) v.push_back(t->as_double(i));
  return v;
}

Status resize(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0}));
  const bool legacy = ctx.opset() < 11;
  XOPT_ASSIGN_OR_RETURN(ResizeAttrs at, read_attrs(ctx, legacy));
  if (legacy) {
    if (present(ctx.input(1)) == nullptr) return ctx.error("scales input is required");
    return resize_impl(ctx, at, doubles(ctx.input(1)), nullptr, nullptr);
  }
  return resize_impl(ctx, at, doubles(present(ctx.input(2))), present(ctx.input(3)),
                     present(ctx.input(1)));
}

Status upsample(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0}));
  XOPT_ASSIGN_OR_RETURN(ResizeAttrs at, read_attrs(ctx, true));
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    for (float s : ctx.node().attr_floats("scales")) scales.push_back(s);
  } else {
    scales = doubles(ctx.input(1));
  }
  if (scales.empty()) return ctx.error("scales are required");
  for (double s : scales)
    if (s < 1) return ctx.error("Upsample scales must be >= 1");
  return resize_impl(ctx, at, scales, nullptr, nullptr);
}

}  // namespace

XOPT_CPU_KERNEL("", "Resize", 10, kLatestOpset, resize);
XOPT_CPU_KERNEL("", "Upsample", 7, 10, upsample);

}  // namespace xopt::exec::nn
