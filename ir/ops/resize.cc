// Resize (opsets 10, 11-12, 13-17, 18+) and Upsample (7-8 attribute scales, 9-10 input scales).
// Output sizes are floor(input * scale) in float arithmetic, as ONNX and onnxruntime compute them,
// or the given sizes (with keep_aspect_ratio_policy from opset 18).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Dim scaled(const Dim& in, double scale) {
  if (!in.is_known()) return scale == 1.0 ? in : Dim();
  return static_cast<int64_t>(std::floor(static_cast<float>(in.value) * static_cast<float>(scale)));
}

// True when input i is present and not an empty tensor (an empty scales input means "absent").
bool non_empty(const InferenceContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return false;
  const Shape& s = ctx.input_shape(i);
  return !(s.is_static() && s.numel() == 0);
}

Status infer_resize(InferenceContext& ctx) {
  const int64_t v = ctx.opset();
  XOPT_RETURN_IF_ERROR(check_arity(ctx, v == 10 ? 2 : (v <= 12 ? 3 : 1), v == 10 ? 2 : 4));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  const size_t scales_at = v == 10 ? 1 : 2;
  const bool has_scales = non_empty(ctx, scales_at);
  const bool has_sizes = v >= 11 && non_empty(ctx, 3);
  if (v >= 13 && has_scales == has_sizes) return ctx.error("needs exactly one of scales and sizes");
  if (v >= 11 && v <= 12 && !has_scales && !has_sizes) return ctx.error("needs scales or sizes");
  std::string policy = v >= 18 ? ctx.node().attr_string("keep_aspect_ratio_policy", "stretch")
                               : std::string("stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return ctx.error("unknown keep_aspect_ratio_policy '" + policy + "'");
  if (has_scales && !has_sizes && policy != "stretch")
    return ctx.error("keep_aspect_ratio_policy '" + policy + "' needs sizes, not scales");
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const int64_t r = static_cast<int64_t>(x.rank());
  std::vector<int64_t> axes;
  if (v >= 18 && ctx.node().has_attr("axes")) {
    auto norm = normalize_axes(ctx.node().attr_ints("axes"), r, "axes");
    if (!norm.is_ok()) return ctx.error(norm.status().message());
    axes = *norm;
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  std::vector<Dim> out = x.dims();
  if (has_sizes) {
    const SymData* sizes = ctx.input_data(3);
    if (sizes == nullptr) {
      for (int64_t a : axes) out[static_cast<size_t>(a)] = Dim();
    } else {
      if (sizes->size() != axes.size())
        return ctx.error("sizes has " + std::to_string(sizes->size()) + " values for " +
                         std::to_string(axes.size()) + " axes");
      if (policy == "stretch") {
        for (size_t i = 0; i < axes.size(); ++i)
          out[static_cast<size_t>(axes[i])] = (*sizes)[i].to_dim();
      } else {
        // One scale for every axis keeps the aspect ratio: the smallest (not_larger) or largest.
        float scale = policy == "not_larger" ? std::numeric_limits<float>::max()
                                             : std::numeric_limits<float>::lowest();
        bool known = true;
        for (size_t i = 0; i < axes.size(); ++i) {
          const Dim& in = x[static_cast<size_t>(axes[i])];
          if (!in.is_known() || !(*sizes)[i].is_known() || in.value == 0) {
            known = false;
            break;
          }
          float s = static_cast<float>(*(*sizes)[i].value) / static_cast<float>(in.value);
          scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
        }
        for (size_t i = 0; i < axes.size(); ++i) {
          size_t a = static_cast<size_t>(axes[i]);
          out[a] =
              known ? Dim(static_cast<int64_t>(std::roundf(scale * static_cast<float>(x[a].value))))
                    : Dim();
        }
      }
    }
  } else {
    auto scales = ctx.input_doubles(scales_at);
    if (!scales) {
      for (int64_t a : axes) out[static_cast<size_t>(a)] = Dim();
    } else {
      if (scales->size() != axes.size())
        return ctx.error("scales has " + std::to_string(scales->size()) + " values for " +
                         std::to_string(axes.size()) + " axes");
      for (size_t i = 0; i < axes.size(); ++i) {
        if ((*scales)[i] <= 0) return ctx.error("scales must be positive");
        size_t a = static_cast<size_t>(axes[i]);
        out[a] = scaled(x[a], (*scales)[i]);
      }
    }
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Status infer_upsample(InferenceContext& ctx) {
  const bool attr_form = ctx.opset() < 9;
  XOPT_RETURN_IF_ERROR(check_arity(ctx, attr_form ? 1 : 2, attr_form ? 1 : 2));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  std::string mode = ctx.node().attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear")
    return ctx.error("unknown mode '" + mode + "'");
  std::optional<std::vector<double>> scales;
  if (attr_form) {
    if (!ctx.node().has_attr("scales")) return ctx.error("attribute scales is missing");
    auto f = ctx.node().attr_floats("scales");
    scales = std::vector<double>(f.begin(), f.end());
  } else {
    scales = ctx.input_doubles(1);
  }
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  std::vector<Dim> out(x.rank());
  if (scales) {
    if (scales->size() != x.rank())
      return ctx.error("scales has " + std::to_string(scales->size()) + " values for input " +
                       str(x));
    for (size_t i = 0; i < x.rank(); ++i) {
      if ((*scales)[i] < 1) return ctx.error("scales must be >= 1");
      out[i] = scaled(x[i], (*scales)[i]);
    }
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

}  // namespace

void register_resize_ops(OpList& ops) {
  ops.push_back(make_op("Resize", 10, 10, infer_resize));
  ops.push_back(make_op("Resize", 11, 12, infer_resize));
  ops.push_back(make_op("Resize", 13, 17, infer_resize));
  ops.push_back(make_op("Resize", 18, kMaxOpset, infer_resize));
  // Upsample: scales attribute at 7-8, input at 9; deprecated (replaced by Resize) at 10.
  ops.push_back(make_op("Upsample", 7, 8, infer_upsample));
  ops.push_back(make_op("Upsample", 9, 10, infer_upsample));
}

}  // namespace xopt::ir::ops
