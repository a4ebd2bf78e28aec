// Slice (attributes until opset 9, inputs from 10) and Split (split input at 1, attribute at 2-12,
// input from 13, num_outputs from 18). Slicing 1-D shape data slices the propagated data.
#include <algorithm>
#include <limits>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

Status infer_split(InferenceContext& ctx) {
  const int64_t v = ctx.opset();
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, (v == 1 || v >= 13) ? 2 : 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  const size_t n_out = ctx.num_outputs();
  if (n_out == 0) return ctx.error("has no outputs");
  auto unknown_all = [&](Shape s) {
    for (size_t i = 0; i < n_out; ++i) ctx.set_output(i, t, s);
    return Status::ok();
  };
  // The split sizes: attribute (opsets 1-12), input 1 (opset 1 and 13+), or none (equal parts).
  std::optional<std::vector<int64_t>> split;
  bool split_given = false;
  if (ctx.has_input(1)) {
    split_given = true;
    split = ctx.input_ints(1);
  } else if (v < 13 && ctx.node().has_attr("split")) {
    split_given = true;
    split = ctx.node().attr_ints("split");
  }
  std::optional<int64_t> num_outputs;
  if (v >= 18 && ctx.node().has_attr("num_outputs")) {
    num_outputs = ctx.node().attr_int("num_outputs", 0);
    if (split_given) return ctx.error("has both a split input and attribute num_outputs");
    if (*num_outputs != static_cast<int64_t>(n_out))
      return ctx.error("num_outputs is " + std::to_string(*num_outputs) + " but the node has " +
                       std::to_string(n_out) + " outputs");
  } else if (v >= 18 && !split_given) {
    return ctx.error("needs a split input or attribute num_outputs (opset " + std::to_string(v) +
                     ")");
  }
  if (!x.has_rank()) return unknown_all(Shape());
  auto axis =
      normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(x.rank()), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  size_t a = static_cast<size_t>(*axis);
  const Dim& d = x[a];
  std::vector<Dim> sizes(n_out);
  if (split_given && !split) {
    // The sizes are not known; only the rank is.
  } else if (split_given) {
    if (split->size() != n_out)
      return ctx.error("split has " + std::to_string(split->size()) + " values for " +
                       std::to_string(n_out) + " outputs");
    int64_t total = 0;
    for (size_t i = 0; i < n_out; ++i) {
      if ((*split)[i] < 0) return ctx.error("split has a negative size");
      total += (*split)[i];
      sizes[i] = (*split)[i];
    }
    if (d.is_known() && total != d.value)
      return ctx.error("split sizes sum to " + std::to_string(total) + " but axis " +
                       std::to_string(a) + " of " + str(x) + " has " + d.to_string());
  } else if (d.is_known()) {
    int64_t n = static_cast<int64_t>(n_out);
    if (num_outputs) {
      // Opset 18: ceil-sized chunks, the last one smaller.
      int64_t chunk = (d.value + n - 1) / n;
      int64_t last = d.value - chunk * (n - 1);
      if (last <= 0)
        return ctx.error("axis size " + d.to_string() + " cannot be split into " +
                         std::to_string(n) + " chunks");
      for (size_t i = 0; i < n_out; ++i) sizes[i] = i + 1 == n_out ? last : chunk;
    } else {
      if (d.value % n != 0)
        return ctx.error("axis size " + d.to_string() + " is not divisible by " +
                         std::to_string(n) + " outputs");
      for (size_t i = 0; i < n_out; ++i) sizes[i] = d.value / n;
    }
  } else if (n_out == 1) {
    sizes[0] = d;
  }
  for (size_t i = 0; i < n_out; ++i) {
    std::vector<Dim> dims = x.dims();
    dims[a] = sizes[i];
    ctx.set_output(i, t, Shape(std::move(dims)));
  }
  return Status::ok();
}

// Elements along one axis of size `dim` taken by start:end:step, with ONNX's clamping.
int64_t slice_count(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

Status infer_slice(InferenceContext& ctx) {
  const bool inputs = ctx.opset() >= 10;
  XOPT_RETURN_IF_ERROR(check_arity(ctx, inputs ? 3 : 1, inputs ? 5 : 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  // starts/ends as data so that a symbolic end equal to the dim (x[:, :Shape(x)[1]]) keeps it.
  const SymData* starts = nullptr;
  const SymData* ends = nullptr;
  SymData attr_starts, attr_ends;
  std::optional<std::vector<int64_t>> axes, steps;
  bool axes_given = false;
  if (inputs) {
    starts = ctx.input_data(1);
    ends = ctx.input_data(2);
    axes_given = ctx.has_input(3);
    if (axes_given) axes = ctx.input_ints(3);
    if (ctx.has_input(4)) steps = ctx.input_ints(4);
  } else {
    if (!ctx.node().has_attr("starts") || !ctx.node().has_attr("ends"))
      return ctx.error("attributes starts and ends are required");
    for (int64_t s : ctx.node().attr_ints("starts")) attr_starts.push_back(SymInt::known(s));
    for (int64_t e : ctx.node().attr_ints("ends")) attr_ends.push_back(SymInt::known(e));
    starts = &attr_starts;
    ends = &attr_ends;
    axes_given = ctx.node().has_attr("axes");
    if (axes_given) axes = ctx.node().attr_ints("axes");
  }
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const int64_t r = static_cast<int64_t>(x.rank());
  std::vector<Dim> out = x.dims();
  if (!starts || !ends || (axes_given && !axes) || (ctx.has_input(4) && !steps)) {
    // Which axes change is unknown (or all of them, when only the bounds are unknown).
    if (axes) {
      auto norm = normalize_axes(*axes, r, "axes");
      if (!norm.is_ok()) return ctx.error(norm.status().message());
      for (int64_t a : *norm) out[static_cast<size_t>(a)] = Dim();
    } else {
      out.assign(x.rank(), Dim());
    }
    ctx.set_output(0, t, Shape(std::move(out)));
    return Status::ok();
  }
  const size_t n = starts->size();
  if (ends->size() != n) return ctx.error("starts and ends differ in length");
  std::vector<int64_t> ax(n);
  if (axes) {
    if (axes->size() != n) return ctx.error("axes and starts differ in length");
    auto norm = normalize_axes(*axes, r, "axes");
    if (!norm.is_ok()) return ctx.error(norm.status().message());
    ax = *norm;
  } else {
    if (static_cast<int64_t>(n) > r) return ctx.error("more starts than input dimensions");
    for (size_t i = 0; i < n; ++i) ax[i] = static_cast<int64_t>(i);
  }
  std::vector<int64_t> st(n, 1);
  if (steps) {
    if (steps->size() != n) return ctx.error("steps and starts differ in length");
    st = *steps;
  }
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  for (size_t i = 0; i < n; ++i) {
    if (st[i] == 0) return ctx.error("step is 0");
    size_t a = static_cast<size_t>(ax[i]);
    const Dim& d = x[a];
    const SymInt& s = (*starts)[i];
    const SymInt& e = (*ends)[i];
    if (d.is_known() && s.is_known() && e.is_known()) {
      out[a] = slice_count(d.value, *s.value, *e.value, st[i]);
    } else if (st[i] == 1 && s.is_known() && *s.value == 0 &&
               ((e.is_known() && *e.value >= kIntMax) ||
                (!d.is_known() && e.same_as(SymInt::from_dim(d))))) {
      out[a] = d;  // the whole axis
    } else {
      out[a] = Dim();
    }
  }
  // Slicing 1-D shape data.
  if (r == 1 && out[0].is_known() && is_integer(t)) {
    const SymData* d = ctx.input_data(0);
    if (d != nullptr && (*starts)[0].is_known()) {
      int64_t size = static_cast<int64_t>(d->size());
      int64_t start = *(*starts)[0].value;
      if (start < 0) start += size;
      start =
          st[0] > 0 ? std::clamp<int64_t>(start, 0, size) : std::clamp<int64_t>(start, 0, size - 1);
      SymData picked;
      for (int64_t k = 0; k < out[0].value; ++k)
        picked.push_back((*d)[static_cast<size_t>(start + k * st[0])]);
      ctx.set_output_data(0, std::move(picked));
    }
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

}  // namespace

void register_slice_split_ops(OpList& ops) {
  // Split: split input at 1, attribute 2-12, input again from 13, num_outputs from 18.
  ops.push_back(make_op("Split", 1, 1, infer_split));
  ops.push_back(make_op("Split", 2, 12, infer_split));
  ops.push_back(make_op("Split", 13, 17, infer_split));
  ops.push_back(make_op("Split", 18, kMaxOpset, infer_split));
  // Slice: attributes until 9, inputs from 10.
  ops.push_back(make_op("Slice", 1, 9, infer_slice));
  ops.push_back(make_op("Slice", 10, kMaxOpset, infer_slice));
}

}  // namespace xopt::ir::ops
