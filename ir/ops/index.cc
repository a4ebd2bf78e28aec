// Data-dependent and miscellaneous tensor ops: NonZero, OneHot, Compress, Unique, EyeLike,
// TensorScatter, ReverseSequence, BitCast, CumProd, Einsum, Det, CenterCropPad, and the losses
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
#include <algorithm>
#include <map>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

// Element k of a constant as a number (strings: non-empty is 1).
double element(const Tensor& t, int64_t k) {
  if (t.dtype() == DType::kString) return t.strings()[static_cast<size_t>(k)].empty() ? 0.0 : 1.0;
  return t.as_double(k);
}

// NonZero: [rank, count], the count known for a constant input.
Status infer_nonzero(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  Dim count;
  if (const Tensor* t = ctx.input_constant(0)) {
    int64_t n = 0;
    for (int64_t k = 0; k < t->numel(); ++k) n += element(*t, k) != 0.0 ? 1 : 0;
    count = Dim(n);
  }
  ctx.set_output(0, DType::kInt64,
                 x.has_rank() ? Shape({Dim(static_cast<int64_t>(x.rank())), count}) : Shape());
  return Status::ok();
}

// OneHot(indices, depth, values): indices' shape with depth inserted at `axis`; values' type.
Status infer_onehot(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  const Shape& idx = ctx.input_shape(0);
  const DType t = ctx.input_dtype(2);
  if (!idx.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const int64_t r = static_cast<int64_t>(idx.rank()) + 1;
  auto axis = normalize_axis(ctx.node().attr_int("axis", -1), r, "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  Dim depth;
  if (auto d = ctx.input_doubles(1); d && d->size() == 1)
    depth = Dim(static_cast<int64_t>((*d)[0]));
  std::vector<Dim> out = idx.dims();
  out.insert(out.begin() + *axis, depth);
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

// Compress: 1-D without axis, else the input with dim `axis` the number of true conditions
// (known for a constant condition).
Status infer_compress(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& x = ctx.input_shape(0);
  const DType t = ctx.input_dtype(0);
  Dim kept;
  if (const Tensor* c = ctx.input_constant(1)) {
    int64_t n = 0;
    for (int64_t k = 0; k < c->numel(); ++k) n += element(*c, k) != 0.0 ? 1 : 0;
    kept = Dim(n);
  }
  if (!ctx.node().has_attr("axis")) {
    ctx.set_output(0, t, Shape({kept}));
    return Status::ok();
  }
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  auto axis =
      normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(x.rank()), "axis");
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  Shape out = x;
  out.mutable_dims()[static_cast<size_t>(*axis)] = kept;
  ctx.set_output(0, t, out);
  return Status::ok();
}

// The number of distinct slices of a constant along `axis` (all elements without one).
int64_t count_unique(const Tensor& t, bool has_axis, int64_t axis) {
  std::vector<int64_t> dims = has_axis ? t.dims() : std::vector<int64_t>{t.numel()};
  const auto a = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < a; ++i) outer *= dims[i];
  for (size_t i = a + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t len = dims[a];
  auto same = [&](int64_t p, int64_t q) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t ip = (o * len + p) * inner + i, iq = (o * len + q) * inner + i;
        if (t.dtype() == DType::kString) {
          if (t.strings()[static_cast<size_t>(ip)] != t.strings()[static_cast<size_t>(iq)])
            return false;
        } else if (t.as_double(ip) != t.as_double(iq)) {
          return false;
        }
      }
    return true;
  };
  int64_t n = 0;
  for (int64_t p = 0; p < len; ++p) {
    bool seen = false;
    for (int64_t q = 0; q < p && !seen; ++q) seen = same(p, q);
    if (!seen) ++n;
  }
  return n;
}

// Unique: Y (1-D, or the input with dim `axis` the number of distinct slices), indices and counts
// of that length, inverse_indices of the input's length along the axis (or its size). The counts
// are known for a constant input.
Status infer_unique(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  const bool has_axis = ctx.node().has_attr("axis");
  int64_t axis = 0;
  if (has_axis && x.has_rank()) {
    auto a = normalize_axis(ctx.node().attr_int("axis", 0), static_cast<int64_t>(x.rank()), "axis");
    if (!a.is_ok()) return ctx.error(a.status().message());
    axis = *a;
  }
  Dim u;
  if (const Tensor* t = ctx.input_constant(0)) u = Dim(count_unique(*t, has_axis, axis));
  Dim len;
  if (x.has_rank()) {
    if (has_axis) {
      len = x[static_cast<size_t>(axis)];
    } else {
      DimProduct p = product(x, 0, x.rank());
      len = p.to_dim();
    }
  }
  Shape y({u});
  if (has_axis) {
    if (x.has_rank()) {
      y = x;
      y.mutable_dims()[static_cast<size_t>(axis)] = u;
    } else {
      y = Shape();
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), y);
  ctx.set_output(1, DType::kInt64, Shape({u}));
  ctx.set_output(2, DType::kInt64, Shape({len}));
  ctx.set_output(3, DType::kInt64, Shape({u}));
  return Status::ok();
}

// EyeLike: input's 2-D shape, `dtype` (default the input's type).
Status infer_eyelike(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() != 2) return ctx.error("input must be 2-D, got " + str(x));
  DType t = ctx.input_dtype(0);
  if (ctx.node().has_attr("dtype")) t = static_cast<DType>(ctx.node().attr_int("dtype", 1));
  ctx.set_output(0, t, x);
  return Status::ok();
}

// Outputs shaped like input 0, of its type.
Status infer_like_first(InferenceContext& ctx) {
  return infer_same_as_input(ctx);
}

Status infer_reverse_sequence(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  return infer_same_as_input(ctx);
}

// BitCast: the same bits as type `to`, of the same bit width: the input's shape.
Status infer_bitcast(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const auto to = static_cast<DType>(ctx.node().attr_int("to", 0));
  const DType from = ctx.input_dtype(0);
  if (static_cast<int>(to) < 1 || static_cast<int>(to) > 16 || to == DType::kString ||
      dtype_size(to) == 0)
    return unsupported(ctx.node().describe() + ": BitCast to element type " +
                       std::to_string(static_cast<int>(to)));
  if (from != DType::kUndefined && dtype_size(from) != dtype_size(to))
    return ctx.error("BitCast needs types of one bit width");
  ctx.set_output(0, to, ctx.input_shape(0));
  return Status::ok();
}

Status infer_cumprod(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  return infer_same_as_input(ctx);
}

// Einsum: the output's labels (explicit after "->", else the labels seen once, sorted, after the
// broadcast ellipsis dims).
Status infer_einsum(InferenceContext& ctx) {
  std::string eq;
  for (char c : ctx.node().attr_string("equation", ""))
    if (c != ' ') eq += c;
  const DType t = ctx.input_dtype(0);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      terms.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  if (terms.size() != ctx.num_inputs())
    return ctx.error("equation '" + eq + "' names " + std::to_string(terms.size()) +
                     " operands for " + std::to_string(ctx.num_inputs()) + " inputs");
  std::map<char, Dim> label_dim;
  std::map<char, int> count;
  std::vector<Dim> ellipsis;
  bool any_unknown = false;
  for (size_t k = 0; k < terms.size(); ++k) {
    const Shape& s = ctx.input_shape(k);
    const std::string& term = terms[k];
    const size_t dots = term.find("...");
    const size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    for (char c : term)
      if (c != '.') ++count[c];
    if (!s.has_rank()) {
      any_unknown = true;
      continue;
    }
    if (dots == std::string::npos ? s.rank() != letters : s.rank() < letters)
      return ctx.error("operand " + std::to_string(k) + " " + str(s) + " does not match '" + term +
                       "'");
    const size_t ell = s.rank() - letters;
    size_t dim = 0;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term[i] == '.') {
        if (i == dots) {
          // Broadcast into the ellipsis dims (right-aligned).
          std::vector<Dim> e(s.dims().begin() + static_cast<long>(dim),
                             s.dims().begin() + static_cast<long>(dim + ell));
          if (e.size() > ellipsis.size())
            ellipsis.insert(ellipsis.begin(), e.size() - ellipsis.size(), Dim(1));
          for (size_t j = 0; j < e.size(); ++j) {
            Dim& cur = ellipsis[ellipsis.size() - e.size() + j];
            if (e[j].is_known() && e[j].value != 1)
              cur = e[j];
            else if (!e[j].is_known() && !(cur.is_known() && cur.value != 1))
              cur = e[j];
          }
          dim += ell;
        }
        continue;
      }
      const Dim& d = s[dim++];
      auto it = label_dim.find(term[i]);
      if (it == label_dim.end() || (d.is_known() && d.value != 1) || !it->second.is_known())
        label_dim[term[i]] = d;
    }
  }
  std::string out;
  bool out_ellipsis;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    out_ellipsis = out.find("...") != std::string::npos;
  } else {
    out_ellipsis = lhs.find("...") != std::string::npos;
    for (const auto& [c, n] : count)
      if (n == 1) out += c;
  }
  if (any_unknown && out_ellipsis) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  std::vector<Dim> dims;
  if (arrow == std::string::npos && out_ellipsis) dims = ellipsis;
  for (char c : out) {
    if (c == '.') continue;
    auto it = label_dim.find(c);
    dims.push_back(it == label_dim.end() ? Dim() : it->second);
  }
  if (arrow != std::string::npos && out_ellipsis) {
    const size_t at = out.substr(0, out.find("...")).size();
    dims.insert(dims.begin() + static_cast<long>(at), ellipsis.begin(), ellipsis.end());
  }
  ctx.set_output(0, t, Shape(std::move(dims)));
  return Status::ok();
}

Status infer_det(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape());
    return Status::ok();
  }
  if (x.rank() < 2) return ctx.error("input must have rank >= 2, got " + str(x));
  ctx.set_output(0, ctx.input_dtype(0),
                 Shape(std::vector<Dim>(x.dims().begin(), x.dims().end() - 2)));
  return Status::ok();
}

// CenterCropPad(input, shape): the dims at `axes` (default all) become shape's values.
Status infer_center_crop_pad(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  Shape x = ctx.input_shape(0);
  const DType t = ctx.input_dtype(0);
  auto sizes = ctx.input_ints(1);
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const auto r = static_cast<int64_t>(x.rank());
  std::vector<int64_t> axes = ctx.node().attr_ints("axes");
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = normalize_axis(axes[i], r, "axes");
    if (!a.is_ok()) return ctx.error(a.status().message());
    x.mutable_dims()[static_cast<size_t>(*a)] =
        sizes && i < sizes->size() ? Dim((*sizes)[i]) : Dim();
  }
  ctx.set_output(0, t, x);
  return Status::ok();
}

// Losses: a scalar (reduction mean / sum) or target's shape; SoftmaxCrossEntropyLoss's optional
// log_prob has the input's shape.
Status infer_loss(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 3));
  const DType t = ctx.input_dtype(0);
  if (ctx.node().attr_string("reduction", "mean") == "none")
    ctx.set_output(0, t, ctx.input_shape(1));
  else
    ctx.set_output(0, t, Shape::scalar());
  ctx.set_output(1, t, ctx.input_shape(0));
  return Status::ok();
}

// TfIdfVectorizer: [max(ngram_indexes) + 1] for a 1-D input, [N, that] for [N, C]; float.
Status infer_tfidf(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const auto idx = ctx.node().attr_ints("ngram_indexes");
  Dim size;
  if (!idx.empty()) size = Dim(*std::max_element(idx.begin(), idx.end()) + 1);
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, DType::kFloat, Shape());
    return Status::ok();
  }
  if (x.rank() != 1 && x.rank() != 2) return ctx.error("X must be [C] or [N, C], got " + str(x));
  ctx.set_output(0, DType::kFloat, x.rank() == 1 ? Shape({size}) : Shape({x[0], size}));
  return Status::ok();
}

}  // namespace

void register_index_ops(OpList& ops) {
  ops.push_back(make_op("TfIdfVectorizer", 9, kMaxOpset, infer_tfidf));
  ops.push_back(make_op("NonZero", 9, kMaxOpset, infer_nonzero));
  ops.push_back(make_op("OneHot", 9, kMaxOpset, infer_onehot));
  ops.push_back(make_op("Compress", 9, kMaxOpset, infer_compress));
  ops.push_back(make_op("Unique", 11, kMaxOpset, infer_unique));
  ops.push_back(make_op("EyeLike", 9, kMaxOpset, infer_eyelike));
  ops.push_back(make_op("TensorScatter", 24, kMaxOpset, infer_like_first));
  ops.push_back(make_op("ReverseSequence", 10, kMaxOpset, infer_reverse_sequence));
  ops.push_back(make_op("BitCast", 26, kMaxOpset, infer_bitcast));
  ops.push_back(make_op("CumProd", 26, kMaxOpset, infer_cumprod));
  ops.push_back(make_op("Einsum", 12, kMaxOpset, infer_einsum));
  ops.push_back(make_op("Det", 11, kMaxOpset, infer_det));
  ops.push_back(make_op("CenterCropPad", 18, kMaxOpset, infer_center_crop_pad));
  ops.push_back(make_op("NegativeLogLikelihoodLoss", 12, kMaxOpset, infer_loss));
  ops.push_back(make_op("SoftmaxCrossEntropyLoss", 12, kMaxOpset, infer_loss));
}

}  // namespace xopt::ir::ops
