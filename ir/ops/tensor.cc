// Data movement: Concat, Pad, Tile, Expand, Transpose, DepthToSpace, SpaceToDepth.
#include <algorithm>

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
    const auto add = checked_add((*pads)[i], (*pads)[i + k]);
    if (!add || *add > kMaxDim || *add < -kMaxDim)
      return ctx.error("pads on axis " + std::to_string(a) + " pass xopt's dim limit 2^40");
    if (x[a].is_known()) {
      int64_t o = x[a].value + *add;
      if (o < 0) return ctx.error("pads make axis " + std::to_string(a) + " negative");
      if (o > kMaxDim)
        return ctx.error("pads make axis " + std::to_string(a) + " pass xopt's dim limit 2^40");
      out[a] = o;
    } else if (*add != 0) {
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
        const auto n = checked_mul(x[i].value, *rp.value);
        if (!n || *n > kMaxDim)
          return ctx.error("repeats " + std::to_string(*rp.value) + " times dim " +
                           std::to_string(i) + " of " + str(x) + " passes xopt's dim limit 2^40");
        out[i] = *n;
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
    XOPT_ASSIGN_OR_RETURN(size_t rank, rank_of_shape_input(ctx, ss[0]));
    target = Shape(std::vector<Dim>(rank));
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
  return mul_dims(d, Dim(f));
}

template <bool kToSpace>
Status infer_depth_space(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  DType t = ctx.input_dtype(0);
  int64_t b = ctx.node().attr_int("blocksize", 0);
  if (b <= 0) return ctx.error("blocksize must be positive");
  if (b > kMaxWindow) return ctx.error("blocksize " + std::to_string(b) + " is past 2^20");
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
