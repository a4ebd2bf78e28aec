// Data-dependent selection and construction: NonZero, OneHot, Compress, Unique, EyeLike,
// CenterCropPad and ReverseSequence.
#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec::ops {
namespace {

bool truthy(const ir::Tensor& t, int64_t i) {
  if (t.dtype() == ir::DType::kBool) return t.data<bool>()[i];
  return t.as_double(i) != 0.0;
}

// NonZero: [rank, n] int64 coordinates of the non-zero elements, in row-major order.
Status nonzero(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const int64_t n = x->numel();
  std::vector<int64_t> hits;
  if (x->dtype() == ir::DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (!x->strings()[static_cast<size_t>(i)].empty()) hits.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i)
      if (truthy(*x, i)) hits.push_back(i);
  }
  const auto rank = static_cast<int64_t>(x->rank());
  const auto nz = static_cast<int64_t>(hits.size());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kInt64, {rank, nz}));
  int64_t* out = y->mutable_data<int64_t>();
  const auto st = row_strides(x->dims());
  for (int64_t k = 0; k < nz; ++k) {
    int64_t rem = hits[static_cast<size_t>(k)];
    for (int64_t a = 0; a < rank; ++a) {
      out[a * nz + k] = rem / st[static_cast<size_t>(a)];
      rem %= st[static_cast<size_t>(a)];
    }
  }
  return Status::ok();
}

// OneHot(indices, depth, values [off, on]): `on` where the index (negative ones counting from
// depth) equals the position along the new axis; indices outside [-depth, depth) give all `off`.
Status onehot(KernelContext& ctx) {
  const ir::Tensor* ind = ctx.input(0);
  const ir::Tensor* depth_t = ctx.input(1);
  const ir::Tensor* values = ctx.input(2);
  if (ind == nullptr || depth_t == nullptr || values == nullptr)
    return ctx.error("indices, depth and values are required");
  if (depth_t->numel() != 1) return ctx.error("depth must have one element");
  if (values->numel() != 2) return ctx.error("values must have two elements [off, on]");
  const auto depth = static_cast<int64_t>(depth_t->as_double(0));
  if (depth < 1) return ctx.error("depth must be positive");
  const auto r = static_cast<int64_t>(ind->rank()) + 1;
  int64_t axis = ctx.node().attr_int("axis", -1);
  if (axis < -r || axis >= r) return ctx.error("axis is out of range");
  if (axis < 0) axis += r;
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> odims = ind->dims();
  odims.insert(odims.begin() + axis, depth);
  const int64_t outer = prod(ind->dims(), 0, a), inner = prod(ind->dims(), a);
  const std::vector<double> iv = doubles(*ind);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, values->dtype(), odims));
  return dispatch_by_size(values->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* v = elems<U>(*values);
    U* out = mutable_elems<U>(*y);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t d = 0; d < depth; ++d)
        for (int64_t i = 0; i < inner; ++i) {
          auto idx = static_cast<int64_t>(iv[static_cast<size_t>(o * inner + i)]);
          if (idx < 0) idx += depth;
          out[(o * depth + d) * inner + i] = v[idx == d ? 1 : 0];
        }
    return Status::ok();
  });
}

// Compress: the slices along `axis` (the flattened input without it) whose condition is true;
// a condition shorter than the axis selects nothing past its end.
Status compress(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* cond = ctx.input(1);
  if (x == nullptr || cond == nullptr) return ctx.error("input and condition are required");
  if (cond->rank() != 1) return ctx.error("condition must be 1-D");
  const bool has_axis = ctx.node().has_attr("axis");
  std::vector<int64_t> dims = has_axis ? x->dims() : std::vector<int64_t>{x->numel()};
  int64_t axis = has_axis ? ctx.node().attr_int("axis", 0) : 0;
  const auto rank = static_cast<int64_t>(dims.size());
  if (axis < -rank || axis >= rank) return ctx.error("axis is out of range");
  if (axis < 0) axis += rank;
  const auto a = static_cast<size_t>(axis);
  if (cond->numel() > dims[a])
    return ctx.error("condition is longer than the axis (" + std::to_string(dims[a]) + ")");
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond->numel(); ++i)
    if (truthy(*cond, i)) keep.push_back(i);
  const int64_t outer = prod(dims, 0, a), len = dims[a], inner = prod(dims, a + 1);
  std::vector<int64_t> odims = dims;
  odims[a] = static_cast<int64_t>(keep.size());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), odims));
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    int64_t w = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k : keep)
        for (int64_t i = 0; i < inner; ++i) dst[w++] = src[(o * len + k) * inner + i];
    return Status::ok();
  });
}

// Unique: the distinct elements (or slices along `axis`), sorted ascending (sorted=1, the
// default) or in order of first occurrence; indices of first occurrences, the inverse map and the
// counts.
Status unique(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const bool has_axis = ctx.node().has_attr("axis");
  const bool sorted = ctx.node().attr_int("sorted", 1) != 0;
  std::vector<int64_t> dims = has_axis ? x->dims() : std::vector<int64_t>{x->numel()};
  int64_t axis = has_axis ? ctx.node().attr_int("axis", 0) : 0;
  const auto rank = static_cast<int64_t>(dims.size());
  if (axis < -rank || axis >= rank) return ctx.error("axis is out of range");
  if (axis < 0) axis += rank;
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = prod(dims, 0, a), len = dims[a], inner = prod(dims, a + 1);
  const bool is_string = x->dtype() == ir::DType::kString;
  const std::vector<double> xv = is_string ? std::vector<double>() : doubles(*x);
  // Slice k's elements, compared lexicographically (row-major over outer, inner).
  auto less = [&](int64_t p, int64_t q) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t ip = (o * len + p) * inner + i, iq = (o * len + q) * inner + i;
        if (is_string) {
          const auto& sp = x->strings()[static_cast<size_t>(ip)];
          const auto& sq = x->strings()[static_cast<size_t>(iq)];
          if (sp != sq) return sp < sq;
        } else {
          const double vp = xv[static_cast<size_t>(ip)], vq = xv[static_cast<size_t>(iq)];
          if (vp != vq) return vp < vq;
        }
      }
    return false;
  };
  auto equal = [&](int64_t p, int64_t q) { return !less(p, q) && !less(q, p); };
  std::vector<int64_t> order(static_cast<size_t>(len));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);
  // Groups of equal slices; each group's first occurrence is its smallest index (stable sort).
  std::vector<int64_t> first, counts, inverse(static_cast<size_t>(len));
  std::vector<int64_t> group_of(static_cast<size_t>(len));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || !equal(order[k - 1], order[k])) {
      first.push_back(order[k]);
      counts.push_back(0);
    }
    group_of[static_cast<size_t>(order[k])] = static_cast<int64_t>(first.size()) - 1;
    ++counts.back();
  }
  std::vector<int64_t> rank_of(first.size());  // group -> output position
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t p, int64_t q) {
      return first[static_cast<size_t>(p)] < first[static_cast<size_t>(q)];
    });
    for (size_t pos = 0; pos < by_first.size(); ++pos)
      rank_of[static_cast<size_t>(by_first[pos])] = static_cast<int64_t>(pos);
  }
  const auto u = static_cast<int64_t>(first.size());
  std::vector<int64_t> out_first(first.size()), out_counts(first.size());
  for (size_t g = 0; g < first.size(); ++g) {
    out_first[static_cast<size_t>(rank_of[g])] = first[g];
    out_counts[static_cast<size_t>(rank_of[g])] = counts[g];
  }
  for (int64_t k = 0; k < len; ++k)
    inverse[static_cast<size_t>(k)] =
        rank_of[static_cast<size_t>(group_of[static_cast<size_t>(k)])];
  std::vector<int64_t> odims = dims;
  odims[a] = u;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), odims));
  XOPT_RETURN_IF_ERROR(dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    int64_t w = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k : out_first)
        for (int64_t i = 0; i < inner; ++i) dst[w++] = src[(o * len + k) * inner + i];
    return Status::ok();
  }));
  const std::vector<int64_t>* outs[] = {&out_first, &inverse, &out_counts};
  for (size_t i = 1; i < 4; ++i) {
    if (!ctx.wants_output(i)) continue;
    const auto& v = *outs[i - 1];
    XOPT_ASSIGN_OR_RETURN(
        ir::Tensor * o, ctx.output_uninit(i, ir::DType::kInt64, {static_cast<int64_t>(v.size())}));
    std::copy(v.begin(), v.end(), o->mutable_data<int64_t>());
  }
  return Status::ok();
}

// EyeLike: ones on the k-th diagonal of a 2-D tensor shaped like the input.
Status eyelike(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  if (x->rank() != 2) return ctx.error("input must be 2-D");
  const auto dt = ctx.node().has_attr("dtype")
                      ? static_cast<ir::DType>(ctx.node().attr_int("dtype", 1))
                      : x->dtype();
  const int64_t k = ctx.node().attr_int("k", 0);
  const int64_t rows = x->dims()[0], cols = x->dims()[1];
  std::vector<double> y(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) y[static_cast<size_t>(i * cols + i + k)] = 1.0;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, dt, x->dims()));
  return store(y, yt);
}

// CenterCropPad: each dim in `axes` (default all) cropped or zero-padded to the given size, the
// kept region centred (the extra element of an odd difference at the end).
Status center_crop_pad(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* shape = ctx.input(1);
  if (x == nullptr || shape == nullptr) return ctx.error("input_data and shape are required");
  const std::vector<int64_t> sizes = shape->to_int64_vector();
  const auto rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> axes = ctx.node().attr_ints("axes");
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  if (axes.size() != sizes.size()) return ctx.error("shape and axes differ in length");
  std::vector<int64_t> odims = x->dims();
  std::vector<int64_t> src_off(x->rank(), 0), dst_off(x->rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = axes[i];
    if (ax < -rank || ax >= rank) return ctx.error("axes out of range");
    if (ax < 0) ax += rank;
    const auto a = static_cast<size_t>(ax);
    const int64_t in = x->dims()[a], out = sizes[i];
    if (out < 0) return ctx.error("negative size");
    odims[a] = out;
    if (out < in) src_off[a] = (in - out) / 2;
    if (out > in) dst_off[a] = (out - in) / 2;
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), odims));
  const auto ss = row_strides(x->dims()), ds = row_strides(odims);
  std::vector<int64_t> common(x->rank());
  for (size_t a = 0; a < x->rank(); ++a) common[a] = std::min(x->dims()[a], odims[a]);
  const int64_t n = prod(common);
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    std::vector<int64_t> idx(common.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t so = 0, dof = 0;
      for (size_t a = 0; a < common.size(); ++a) {
        so += (idx[a] + src_off[a]) * ss[a];
        dof += (idx[a] + dst_off[a]) * ds[a];
      }
      dst[dof] = src[so];
      for (size_t a = common.size(); a-- > 0;) {
        if (++idx[a] < common[a]) break;
        idx[a] = 0;
      }
    }
    return Status::ok();
  });
}

// ReverseSequence: for each batch entry b, the first sequence_lens[b] steps along time_axis
// reversed.
Status reverse_sequence(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* lens_t = ctx.input(1);
  if (x == nullptr || lens_t == nullptr) return ctx.error("input and sequence_lens are required");
  if (x->rank() < 2) return ctx.error("input must have rank >= 2");
  const int64_t batch_axis = ctx.node().attr_int("batch_axis", 1);
  const int64_t time_axis = ctx.node().attr_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    return ctx.error("batch_axis and time_axis must be 0 and 1 in some order");
  const std::vector<int64_t> lens = lens_t->to_int64_vector();
  const int64_t nb = x->dims()[static_cast<size_t>(batch_axis)];
  const int64_t nt = x->dims()[static_cast<size_t>(time_axis)];
  if (static_cast<int64_t>(lens.size()) != nb)
    return ctx.error("sequence_lens must have batch size");
  for (int64_t l : lens)
    if (l < 0 || l > nt) return ctx.error("a sequence length is outside [0, time]");
  const int64_t inner = prod(x->dims(), 2);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), x->dims()));
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t t = 0; t < nt; ++t) {
        const int64_t l = lens[static_cast<size_t>(b)];
        const int64_t st = t < l ? l - 1 - t : t;
        auto off = [&](int64_t tt) { return (time_axis == 0 ? tt * nb + b : b * nt + tt) * inner; };
        std::copy(src + off(st), src + off(st) + inner, dst + off(t));
      }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "NonZero", 9, kLatest, nonzero);
XOPT_CPU_KERNEL("", "OneHot", 9, kLatest, onehot);
XOPT_CPU_KERNEL("", "Compress", 9, kLatest, compress);
XOPT_CPU_KERNEL("", "Unique", 11, kLatest, unique);
XOPT_CPU_KERNEL("", "EyeLike", 9, kLatest, eyelike);
XOPT_CPU_KERNEL("", "CenterCropPad", 18, kLatest, center_crop_pad);
XOPT_CPU_KERNEL("", "ReverseSequence", 10, kLatest, reverse_sequence);

}  // namespace xopt::exec::ops
