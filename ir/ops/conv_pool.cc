// Convolution and pooling: Conv, ConvTranspose, AveragePool, MaxPool, LpPool and the global pools.
// Output sizes follow the ONNX formulas with auto_pad, dilations and ceil_mode (a window that would
// start in the right padding is dropped, as PyTorch and onnxruntime do).
#include <algorithm>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

Result<AutoPad> auto_pad_of(const InferenceContext& ctx) {
  std::string s = ctx.node().attr_string("auto_pad", "NOTSET");
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return ctx.error("unknown auto_pad '" + s + "'");
}

// An ints attribute of `n` values (default `dflt` each when absent).
Result<std::vector<int64_t>> spatial_attr(const InferenceContext& ctx, const char* name, size_t n,
                                          int64_t dflt) {
  if (!ctx.node().has_attr(name)) return std::vector<int64_t>(n, dflt);
  auto v = ctx.node().attr_ints(name);
  if (v.size() != n)
    return ctx.error(std::string("attribute ") + name + " has " + std::to_string(v.size()) +
                     " values, expected " + std::to_string(n));
  return v;
}

struct Window {
  std::vector<Dim> kernel;  // per spatial axis (may be unknown when taken from W)
  std::vector<int64_t> strides, dilations, pads;
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
};

Result<Window> read_window(const InferenceContext& ctx, size_t n, std::vector<Dim> kernel,
                           bool use_dilations, bool use_ceil_mode) {
  Window w;
  w.kernel = std::move(kernel);
  XOPT_ASSIGN_OR_RETURN(w.auto_pad, auto_pad_of(ctx));
  XOPT_ASSIGN_OR_RETURN(w.strides, spatial_attr(ctx, "strides", n, 1));
  if (use_dilations) {
    XOPT_ASSIGN_OR_RETURN(w.dilations, spatial_attr(ctx, "dilations", n, 1));
  } else {
    w.dilations.assign(n, 1);
  }
  XOPT_ASSIGN_OR_RETURN(w.pads, spatial_attr(ctx, "pads", 2 * n, 0));
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] <= 0) return ctx.error("strides must be positive");
    if (w.dilations[i] <= 0) return ctx.error("dilations must be positive");
    if (w.kernel[i].is_known() && w.kernel[i].value <= 0)
      return ctx.error("kernel size must be positive, got " + w.kernel[i].to_string());
    if (w.strides[i] > kMaxWindow || w.dilations[i] > kMaxWindow ||
        (w.kernel[i].is_known() && w.kernel[i].value > kMaxWindow))
      return ctx.error("kernel, strides and dilations must be at most 2^20");
  }
  for (int64_t p : w.pads) {
    if (p < 0) return ctx.error("pads must not be negative");
    if (p > kMaxWindow) return ctx.error("pads must be at most 2^20, got " + std::to_string(p));
  }
  w.ceil_mode = use_ceil_mode && ctx.node().attr_int("ceil_mode", 0) != 0;
  return w;
}

// Output size of one sliding-window axis.
Result<Dim> window_output(const InferenceContext& ctx, const Dim& in, const Window& w, size_t i) {
  size_t n = w.strides.size();
  int64_t s = w.strides[i];
  const bool same = w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower;
  if (!w.kernel[i].is_known()) return Dim();
  int64_t ek = (w.kernel[i].value - 1) * w.dilations[i] + 1;
  if (!in.is_known()) {
    // A symbolic size survives a window that keeps every position.
    int64_t pad = w.auto_pad == AutoPad::kNotSet ? w.pads[i] + w.pads[i + n] : 0;
    if (s == 1 && (same || pad == ek - 1)) return in;
    return Dim();
  }
  int64_t pb = 0, pe = 0;
  if (w.auto_pad == AutoPad::kNotSet) {
    pb = w.pads[i];
    pe = w.pads[i + n];
  } else if (same) {
    int64_t residual = in.value % s;
    int64_t total = std::max<int64_t>(residual == 0 ? ek - s : ek - residual, 0);
    int64_t small = total / 2, big = total - small;
    pb = w.auto_pad == AutoPad::kSameUpper ? small : big;
    pe = total - pb;
  }
  int64_t span = in.value + pb + pe - ek;
  if (span < 0)
    return ctx.error("kernel extent " + std::to_string(ek) + " exceeds the padded input size " +
                     std::to_string(in.value + pb + pe) + " on spatial axis " + std::to_string(i));
  int64_t out = (w.ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (w.ceil_mode && (out - 1) * s >= in.value + pb) --out;
  return Dim(out);
}

Status infer_conv(InferenceContext& ctx) {
  return infer_conv_like(ctx, 3);
}

Status infer_conv_transpose(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 3));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const Shape& x = ctx.input_shape(0);
  const Shape& wt = ctx.input_shape(1);
  DType t = ctx.input_dtype(0);
  if (!x.has_rank() && !wt.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  size_t rank = x.has_rank() ? x.rank() : wt.rank();
  if (rank < 3) return ctx.error("X must have rank >= 3, got " + str(x));
  if (wt.has_rank() && wt.rank() != rank)
    return ctx.error("W " + str(wt) + " and X " + str(x) + " differ in rank");
  size_t n = rank - 2;
  int64_t group = ctx.node().attr_int("group", 1);
  if (group <= 0 || group > kMaxWindow)
    return ctx.error("group must be in [1, 2^20], got " + std::to_string(group));
  if (x.has_rank() && wt.has_rank() && x[1].is_known() && wt[0].is_known() &&
      x[1].value != wt[0].value)
    return ctx.error("X has " + x[1].to_string() + " channels but W " + str(wt) + " expects " +
                     wt[0].to_string());
  std::vector<Dim> kernel(n);
  if (ctx.node().has_attr("kernel_shape")) {
    XOPT_ASSIGN_OR_RETURN(auto k, spatial_attr(ctx, "kernel_shape", n, 1));
    for (size_t i = 0; i < n; ++i) kernel[i] = k[i];
  } else if (wt.has_rank()) {
    for (size_t i = 0; i < n; ++i) kernel[i] = wt[2 + i];
  }
  XOPT_ASSIGN_OR_RETURN(Window w, read_window(ctx, n, kernel, true, false));
  XOPT_ASSIGN_OR_RETURN(auto out_pad, spatial_attr(ctx, "output_padding", n, 0));
  for (int64_t p : out_pad)
    if (p < 0 || p > kMaxWindow)
      return ctx.error("output_padding must be in [0, 2^20], got " + std::to_string(p));
  std::vector<Dim> out(rank);
  out[0] = x.has_rank() ? x[0] : Dim();
  out[1] = wt.has_rank() && wt[1].is_known() ? Dim(wt[1].value * group) : Dim();
  if (ctx.input_shape(2).is_static()) {
    const Shape& b = ctx.input_shape(2);
    if (b.rank() != 1 || (out[1].is_known() && b[0].value != out[1].value))
      return ctx.error("bias " + str(b) + " does not match " + out[1].to_string() +
                       " output channels");
  }
  if (ctx.node().has_attr("output_shape")) {
    auto os = ctx.node().attr_ints("output_shape");
    // The spatial sizes; some exporters write the full shape (N, C, spatial...).
    if (os.size() == rank) os.erase(os.begin(), os.begin() + 2);
    if (os.size() != n)
      return ctx.error("attribute output_shape has " + std::to_string(os.size()) +
                       " values, expected " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) out[2 + i] = os[i];
  } else {
    for (size_t i = 0; i < n; ++i) {
      const Dim in = x.has_rank() ? x[2 + i] : Dim();
      if (!in.is_known() || !kernel[i].is_known()) continue;
      int64_t s = w.strides[i];
      int64_t ek = (kernel[i].value - 1) * w.dilations[i] + 1;
      if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
        // input * stride, padding never negative (onnxruntime's ComputeTransposePadAndOutputShape).
        out[2 + i] = std::min(in.value * s, s * (in.value - 1) + out_pad[i] + ek);
        continue;
      }
      int64_t pads = w.auto_pad == AutoPad::kValid ? 0 : w.pads[i] + w.pads[i + n];
      int64_t o = s * (in.value - 1) + out_pad[i] + ek - pads;
      if (o < 0)
        return ctx.error("output size on spatial axis " + std::to_string(i) + " would be " +
                         std::to_string(o));
      out[2 + i] = o;
    }
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

enum class PoolKind { kAverage, kMax, kLp };

template <PoolKind kKind>
Status infer_pool(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  if (kKind != PoolKind::kMax && ctx.num_outputs() > 1)
    return ctx.error("has more than one output");
  if (kKind == PoolKind::kMax && ctx.opset() < 8 && ctx.num_outputs() > 1)
    return ctx.error("MaxPool has an Indices output only from opset 8");
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  if (!ctx.node().has_attr("kernel_shape")) return ctx.error("attribute kernel_shape is missing");
  auto k = ctx.node().attr_ints("kernel_shape");
  if (x.has_rank() && x.rank() != k.size() + 2)
    return ctx.error("kernel_shape has " + std::to_string(k.size()) + " values but X is " + str(x));
  size_t n = k.size();
  const int64_t v = ctx.opset();
  const bool dilations = (kKind == PoolKind::kMax && v >= 10) ||
                         (kKind == PoolKind::kAverage && v >= 19) ||
                         (kKind == PoolKind::kLp && v >= 18);
  const bool ceil_mode = (kKind == PoolKind::kLp) ? v >= 18 : v >= 10;
  XOPT_ASSIGN_OR_RETURN(
      Window w, read_window(ctx, n, std::vector<Dim>(k.begin(), k.end()), dilations, ceil_mode));
  std::vector<Dim> out(n + 2);
  out[0] = x.has_rank() ? x[0] : Dim();
  out[1] = x.has_rank() ? x[1] : Dim();
  for (size_t i = 0; i < n; ++i) {
    XOPT_ASSIGN_OR_RETURN(out[2 + i], window_output(ctx, x.has_rank() ? x[2 + i] : Dim(), w, i));
  }
  Shape shape(std::move(out));
  ctx.set_output(0, t, shape);
  ctx.set_output(1, DType::kInt64, shape);
  return Status::ok();
}

Status infer_global_pool(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape());
    return Status::ok();
  }
  if (x.rank() < 2) return ctx.error("X must have rank >= 2, got " + str(x));
  std::vector<Dim> out(x.rank(), Dim(1));
  out[0] = x[0];
  out[1] = x[1];
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::move(out)));
  return Status::ok();
}

}  // namespace

Status infer_conv_like(InferenceContext& ctx, size_t max_inputs) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, max_inputs));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  XOPT_ASSIGN_OR_RETURN(Shape y, conv_output_shape(ctx, 0, 1, 2));
  ctx.set_output(0, ctx.input_dtype(0), std::move(y));
  return Status::ok();
}

Result<Shape> conv_output_shape(const InferenceContext& ctx, size_t x_index, size_t w_index,
                                size_t bias_index) {
  const Shape& x = ctx.input_shape(x_index);
  const Shape& wt = ctx.input_shape(w_index);
  if (!x.has_rank() && !wt.has_rank()) return Shape();
  size_t rank = x.has_rank() ? x.rank() : wt.rank();
  if (rank < 3) return ctx.error("X must have rank >= 3, got " + str(x));
  if (wt.has_rank() && wt.rank() != rank)
    return ctx.error("W " + str(wt) + " and X " + str(x) + " differ in rank");
  size_t n = rank - 2;
  int64_t group = ctx.node().attr_int("group", 1);
  if (group <= 0 || group > kMaxWindow)
    return ctx.error("group must be in [1, 2^20], got " + std::to_string(group));
  if (x.has_rank() && wt.has_rank() && x[1].is_known() && wt[1].is_known() &&
      x[1].value != wt[1].value * group)
    return ctx.error("X has " + x[1].to_string() + " channels but W " + str(wt) + " with group " +
                     std::to_string(group) + " expects " + std::to_string(wt[1].value * group));
  if (wt.has_rank() && wt[0].is_known() && wt[0].value % group != 0)
    return ctx.error("W's output channels " + wt[0].to_string() + " are not divisible by group " +
                     std::to_string(group));
  std::vector<Dim> kernel(n);
  if (ctx.node().has_attr("kernel_shape")) {
    XOPT_ASSIGN_OR_RETURN(auto k, spatial_attr(ctx, "kernel_shape", n, 1));
    for (size_t i = 0; i < n; ++i) {
      if (wt.has_rank() && wt[2 + i].is_known() && wt[2 + i].value != k[i])
        return ctx.error("kernel_shape disagrees with W " + str(wt));
      kernel[i] = k[i];
    }
  } else if (wt.has_rank()) {
    for (size_t i = 0; i < n; ++i) kernel[i] = wt[2 + i];
  }
  XOPT_ASSIGN_OR_RETURN(Window w, read_window(ctx, n, kernel, true, false));
  std::vector<Dim> out(rank);
  out[0] = x.has_rank() ? x[0] : Dim();
  out[1] = wt.has_rank() ? wt[0] : Dim();
  if (ctx.has_input(bias_index) && ctx.input_shape(bias_index).has_rank()) {
    const Shape& b = ctx.input_shape(bias_index);
    if (b.rank() != 1 || (b[0].is_known() && out[1].is_known() && b[0].value != out[1].value))
      return ctx.error("bias " + str(b) + " does not match " + out[1].to_string() +
                       " output channels");
  }
  for (size_t i = 0; i < n; ++i) {
    XOPT_ASSIGN_OR_RETURN(out[2 + i], window_output(ctx, x.has_rank() ? x[2 + i] : Dim(), w, i));
  }
  return Shape(std::move(out));
}

void register_conv_pool_ops(OpList& ops) {
  ops.push_back(make_op("Conv", 1, kMaxOpset, infer_conv));
  ops.push_back(make_op("ConvTranspose", 1, kMaxOpset, infer_conv_transpose));
  // AveragePool: ceil_mode from 10, dilations from 19.
  ops.push_back(make_op("AveragePool", 1, 9, infer_pool<PoolKind::kAverage>));
  ops.push_back(make_op("AveragePool", 10, 18, infer_pool<PoolKind::kAverage>));
  ops.push_back(make_op("AveragePool", 19, kMaxOpset, infer_pool<PoolKind::kAverage>));
  // MaxPool: Indices output from 8, ceil_mode and dilations from 10.
  ops.push_back(make_op("MaxPool", 1, 7, infer_pool<PoolKind::kMax>));
  ops.push_back(make_op("MaxPool", 8, 9, infer_pool<PoolKind::kMax>));
  ops.push_back(make_op("MaxPool", 10, kMaxOpset, infer_pool<PoolKind::kMax>));
  // LpPool: ceil_mode and dilations from 18.
  ops.push_back(make_op("LpPool", 1, 17, infer_pool<PoolKind::kLp>));
  ops.push_back(make_op("LpPool", 18, kMaxOpset, infer_pool<PoolKind::kLp>));
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
    ops.push_back(make_op(op, 1, kMaxOpset, infer_global_pool));
}

}  // namespace xopt::ir::ops
