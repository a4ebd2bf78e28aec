// Data movement: Concat, Split, Slice, Pad, Tile, Expand, Transpose, DepthToSpace, SpaceToDepth.
#include <algorithm>
#include <limits>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

// Sum of dims: known when all are, a symbol when it is the only non-zero term.
Dim sum_dims(const std::vector<Dim>& dims) {
  int64_t known = 0;
  std::vector<Dim> other;
  for (const Dim& d : dims) {
    if (d.is_known()) {
      known += d.value;
    } else {
      other.push_back(d);
    }
  }
  if (other.empty()) return known;
  if (other.size() == 1 && known == 0) return other[0];
  return Dim();
}

Status infer_concat(InferenceContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.error("needs at least one input");
  if (ctx.opset() >= 4 && !ctx.node().has_attr("axis"))
    return ctx.error("attribute axis is missing");
  DType t = ctx.input_dtype(0);
  std::optional<size_t> rank;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    const Shape& s = ctx.input_shape(i);
    if (!s.has_rank()) continue;
    if (rank && *rank != s.rank())
      return ctx.error("inputs differ in rank: " + str(ctx.input_shape(0)) + " vs " + str(s));
    rank = s.rank();
  }
  if (!rank) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  if (*rank == 0) return ctx.error("cannot concatenate scalars");
  auto axis = normalize_axis(ctx.node().attr_int("axis", 1), static_cast<int64_t>(*rank), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  size_t a = static_cast<size_t>(*axis);
  std::vector<Dim> out(*rank);
  std::vector<Dim> along;
  bool all_ranked = true;
  for (size_t d = 0; d < *rank; ++d) {
    std::optional<Dim> merged;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Shape& s = ctx.input_shape(i);
      if (!s.has_rank()) {
        all_ranked = false;
        continue;
      }
      if (d == a) {
        along.push_back(s[d]);
        continue;
      }
      if (!merged) {
        merged = s[d];
      } else if (merged->is_known() && s[d].is_known() && merged->value != s[d].value) {
        return ctx.error("inputs differ in dimension " + std::to_string(d) + ": " +
                         str(ctx.input_shape(0)) + " vs " + str(s));
      } else if (!merged->is_known() &&
                 (s[d].is_known() || (!merged->is_symbolic() && s[d].is_symbolic()))) {
        // The sizes must agree at run time: the most specific one describes them all.
        merged = s[d];
      }
    }
    out[d] = d == a ? (all_ranked ? sum_dims(along) : Dim()) : merged.value_or(Dim());
  }
  // Concatenating 1-D shape data (Concat(Unsqueeze(Gather(Shape(x))), [-1])).
  if (*rank == 1 && is_integer(t)) {
    SymData data;
    bool ok = true;
    for (size_t i = 0; i < ctx.num_inputs() && ok; ++i) {
      const SymData* d = ctx.input_data(i);
      ok = d != nullptr;
      if (ok) data.insert(data.end(), d->begin(), d->end());
    }
    if (ok) ctx.set_output_data(0, std::move(data));
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

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

Status infer_pad(InferenceContext& ctx) {
  const int64_t v = ctx.opset();
  XOPT_RETURN_IF_ERROR(check_arity(ctx, v >= 11 ? 2 : 1, v >= 18 ? 4 : (v >= 11 ? 3 : 1)));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  std::string mode = ctx.node().attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !(v >= 19 && mode == "wrap"))
    return ctx.error("unknown mode '" + mode + "'");
  std::optional<std::vector<int64_t>> pads;
  if (v < 11) {
    const char* name = v < 2 ? "paddings" : "pads";
    if (!ctx.node().has_attr(name))
      return ctx.error(std::string("attribute ") + name + " is missing");
    pads = ctx.node().attr_ints(name);
  } else {
    pads = ctx.input_ints(1);
  }
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const int64_t r = static_cast<int64_t>(x.rank());
  std::vector<int64_t> axes;
  bool axes_known = true;
  if (v >= 18 && ctx.has_input(3)) {
    auto a = ctx.input_ints(3);
    if (a) {
      auto norm = normalize_axes(*a, r, "axes");
      if (!norm.is_ok()) return ctx.error(norm.status().message());
      axes = *norm;
    } else {
      axes_known = false;
    }
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  std::vector<Dim> out = x.dims();
  if (!pads || !axes_known) {
    ctx.set_output(0, t, Shape(std::vector<Dim>(x.rank())));
    return Status::ok();
  }
  if (pads->size() != 2 * axes.size())
    return ctx.error("pads has " + std::to_string(pads->size()) + " values, expected " +
                     std::to_string(2 * axes.size()));
  const size_t k = axes.size();
  for (size_t i = 0; i < k; ++i) {
    size_t a = static_cast<size_t>(axes[i]);
    int64_t add = (*pads)[i] + (*pads)[i + k];
    if (x[a].is_known()) {
      int64_t o = x[a].value + add;
      if (o < 0) return ctx.error("pads make axis " + std::to_string(a) + " negative");
      out[a] = o;
    } else if (add != 0) {
      out[a] = Dim();
    }
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Status infer_tile(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const SymData* reps = ctx.input_data(1);
  std::vector<Dim> out(x.rank());
  if (reps != nullptr) {
    if (reps->size() != x.rank())
      return ctx.error("repeats has " + std::to_string(reps->size()) + " values for input " +
                       str(x));
    for (size_t i = 0; i < x.rank(); ++i) {
      const SymInt& rp = (*reps)[i];
      if (rp.is_known() && *rp.value < 0) return ctx.error("repeats must not be negative");
      if (rp.is_known() && x[i].is_known()) {
        out[i] = x[i].value * *rp.value;
      } else if (rp.is_known() && *rp.value == 1) {
        out[i] = x[i];
      } else if (x[i].is_known() && x[i].value == 1) {
        out[i] = rp.to_dim();
      }
    }
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Status infer_expand(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  const Shape& ss = ctx.input_shape(1);
  if (ss.has_rank() && ss.rank() != 1) return ctx.error("shape must be 1-D, got " + str(ss));
  Shape target;
  if (const SymData* d = ctx.input_data(1)) {
    std::vector<Dim> dims;
    for (const SymInt& e : *d) {
      if (e.is_known() && *e.value < 0)
        return ctx.error("shape has negative value " + std::to_string(*e.value));
      dims.push_back(e.to_dim());
    }
    target = Shape(std::move(dims));
  } else if (ss.is_static()) {
    target = Shape(std::vector<Dim>(static_cast<size_t>(ss[0].value)));
  }
  auto out = broadcast_shapes(x, target);
  if (!out.is_ok()) return ctx.error(out.status().message());
  ctx.set_output(0, t, std::move(out).value());
  return Status::ok();
}

Status infer_transpose(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  if (!x.has_rank()) {
    if (ctx.node().has_attr("perm")) {
      ctx.set_output(0, t, Shape(std::vector<Dim>(ctx.node().attr_ints("perm").size())));
    } else {
      ctx.set_output(0, t, Shape());
    }
    return Status::ok();
  }
  const size_t r = x.rank();
  std::vector<int64_t> perm;
  if (ctx.node().has_attr("perm")) {
    perm = ctx.node().attr_ints("perm");
  } else {
    for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
  }
  if (perm.size() != r)
    return ctx.error("perm has " + std::to_string(perm.size()) + " values for input " + str(x));
  std::vector<bool> seen(r, false);
  std::vector<Dim> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)])
      return ctx.error("perm is not a permutation of 0.." + std::to_string(r - 1));
    seen[static_cast<size_t>(p)] = true;
    out[i] = x[static_cast<size_t>(p)];
  }
  if (r == 1)
    if (const SymData* d = ctx.input_data(0)) ctx.set_output_data(0, *d);
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

Dim mul_dim(const Dim& d, int64_t f) {
  if (d.is_known()) return d.value * f;
  return f == 1 ? d : Dim();
}

template <bool kToSpace>
Status infer_depth_space(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  int64_t b = ctx.node().attr_int("blocksize", 0);
  if (b <= 0) return ctx.error("blocksize must be positive");
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape(std::vector<Dim>(4)));
    return Status::ok();
  }
  if (x.rank() != 4) return ctx.error("input must be 4-D, got " + str(x));
  std::vector<Dim> out = x.dims();
  if (kToSpace) {
    if (x[1].is_known() && x[1].value % (b * b) != 0)
      return ctx.error("channels " + x[1].to_string() + " are not divisible by blocksize^2");
    out[1] = x[1].is_known() ? Dim(x[1].value / (b * b)) : (b == 1 ? x[1] : Dim());
    out[2] = mul_dim(x[2], b);
    out[3] = mul_dim(x[3], b);
  } else {
    for (size_t i = 2; i < 4; ++i) {
      if (x[i].is_known() && x[i].value % b != 0)
        return ctx.error("spatial size " + x[i].to_string() + " is not divisible by blocksize");
      out[i] = x[i].is_known() ? Dim(x[i].value / b) : (b == 1 ? x[i] : Dim());
    }
    out[1] = mul_dim(x[1], b * b);
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

}  // namespace

void register_tensor_ops(OpList& ops) {
  // Concat: axis defaults to 1 until opset 3 and is required from 4.
  ops.push_back(make_op("Concat", 1, 3, infer_concat));
  ops.push_back(make_op("Concat", 4, kMaxOpset, infer_concat));
  // Split: split input at 1, attribute 2-12, input again from 13, num_outputs from 18.
  ops.push_back(make_op("Split", 1, 1, infer_split));
  ops.push_back(make_op("Split", 2, 12, infer_split));
  ops.push_back(make_op("Split", 13, 17, infer_split));
  ops.push_back(make_op("Split", 18, kMaxOpset, infer_split));
  // Slice: attributes until 9, inputs from 10.
  ops.push_back(make_op("Slice", 1, 9, infer_slice));
  ops.push_back(make_op("Slice", 10, kMaxOpset, infer_slice));
  // Pad: attribute pads until 10, input from 11, axes input from 18.
  ops.push_back(make_op("Pad", 1, 10, infer_pad));
  ops.push_back(make_op("Pad", 11, 17, infer_pad));
  ops.push_back(make_op("Pad", 18, kMaxOpset, infer_pad));
  ops.push_back(make_op("Tile", 6, kMaxOpset, infer_tile));
  ops.push_back(make_op("Expand", 8, kMaxOpset, infer_expand));
  ops.push_back(make_op("Transpose", 1, kMaxOpset, infer_transpose));
  ops.push_back(make_op("DepthToSpace", 1, kMaxOpset, infer_depth_space<true>));
  ops.push_back(make_op("SpaceToDepth", 1, kMaxOpset, infer_depth_space<false>));
}

}  // namespace xopt::ir::ops
