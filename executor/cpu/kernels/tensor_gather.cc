// Gather, GatherElements and ScatterND: indexed copies (negative indices count from the end).
#include <algorithm>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

// Maps index `i` into [0, dim) or fails naming it.
inline Result<int64_t> fix_index(const KernelContext& ctx, int64_t i, int64_t dim) {
  if (i < -dim || i >= dim)
    return ctx.error("index " + std::to_string(i) + " is out of range for a dim of " +
                     std::to_string(dim));
  return i < 0 ? i + dim : i;
}

// Gather: y[o, idx..., i] = x[o, indices[idx...], i] for the axis between o and i.
Status gather(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  XOPT_ASSIGN_OR_RETURN(auto indices, int_input(ctx, 1, "indices"));
  const ir::Tensor& ind = *ctx.input(1);
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 0),
                                                     static_cast<int64_t>(x->rank())));
  const auto a = static_cast<size_t>(axis);
  const int64_t dim = x->dims()[a];
  for (int64_t& i : indices) {
    XOPT_ASSIGN_OR_RETURN(i, fix_index(ctx, i, dim));
  }
  std::vector<int64_t> out_dims(x->dims().begin(), x->dims().begin() + axis);
  out_dims.insert(out_dims.end(), ind.dims().begin(), ind.dims().end());
  out_dims.insert(out_dims.end(), x->dims().begin() + axis + 1, x->dims().end());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), out_dims));
  const int64_t outer = product(x->dims(), 0, a), inner = product(x->dims(), a + 1, x->rank());
  const auto n = static_cast<int64_t>(indices.size());
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    if (inner == 0) return Status::ok();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < n; ++k) {
        const U* s = src + (o * dim + indices[static_cast<size_t>(k)]) * inner;
        std::copy(s, s + inner, dst + (o * n + k) * inner);
      }
    return Status::ok();
  });
}

// GatherElements: y[i] = x[i with its axis coordinate replaced by indices[i]].
Status gather_elements(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  XOPT_ASSIGN_OR_RETURN(auto indices, int_input(ctx, 1, "indices"));
  const ir::Tensor& ind = *ctx.input(1);
  const size_t rank = x->rank();
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 0),
                                                     static_cast<int64_t>(rank)));
  if (ind.rank() != rank) return ctx.error("indices and data differ in rank");
  for (size_t i = 0; i < rank; ++i)
    if (static_cast<int64_t>(i) != axis && ind.dims()[i] > x->dims()[i])
      return ctx.error("indices " + ir::dims_string(ind.dims()) + " exceed data " +
                       ir::dims_string(x->dims()) + " outside the axis");
  const auto a = static_cast<size_t>(axis);
  const int64_t dim = x->dims()[a];
  for (int64_t& i : indices) {
    XOPT_ASSIGN_OR_RETURN(i, fix_index(ctx, i, dim));
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), ind.dims()));
  const auto xs = strides_of(x->dims());
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    std::vector<int64_t> idx(rank, 0);
    int64_t base = 0;  // offset in x of idx with the axis coordinate 0
    for (size_t i = 0; i < indices.size(); ++i) {
      dst[i] = src[base + indices[i] * xs[a]];
      for (size_t k = rank; k-- > 0;) {
        if (k != a) base += xs[k];
        if (++idx[k] < ind.dims()[k]) break;
        if (k != a) base -= xs[k] * ind.dims()[k];
        idx[k] = 0;
      }
    }
    return Status::ok();
  });
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

template <typename T>
inline void combine(T& dst, const T& src, Reduction r) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case Reduction::kNone:
        dst = src;
        break;
      case Reduction::kAdd:
      case Reduction::kMax:
        dst = dst || src;
        break;
      case Reduction::kMul:
      case Reduction::kMin:
        dst = dst && src;
        break;
    }
  } else {
    auto a = to_compute(dst), b = to_compute(src);
    switch (r) {
      case Reduction::kNone:
        dst = src;
        return;
      case Reduction::kAdd:
        dst = from_compute<T>(a + b);
        return;
      case Reduction::kMul:
        dst = from_compute<T>(a * b);
        return;
      case Reduction::kMax:
        dst = from_compute<T>(b > a ? b : a);
        return;
      case Reduction::kMin:
        dst = from_compute<T>(b < a ? b : a);
        return;
    }
  }
}

Result<Reduction> reduction_of(const KernelContext& ctx) {
  std::string r = ctx.opset() >= 16 ? ctx.node().attr_string("reduction", "none") : "none";
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (ctx.opset() >= 18 && r == "max") return Reduction::kMax;
  if (ctx.opset() >= 18 && r == "min") return Reduction::kMin;
  return ctx.error("reduction '" + r + "' is not defined at opset " + std::to_string(ctx.opset()));
}

// ScatterND: y = copy of data; y[indices[j]] (a slice when indices address fewer than all dims)
// is set to, or combined with, updates[j], in order.
Status scatter_nd(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  XOPT_ASSIGN_OR_RETURN(auto indices, int_input(ctx, 1, "indices"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* upd, required_input(ctx, 2, "updates"));
  const ir::Tensor& ind = *ctx.input(1);
  XOPT_ASSIGN_OR_RETURN(Reduction red, reduction_of(ctx));
  if (ind.rank() == 0) return ctx.error("indices must have rank >= 1");
  const auto k = static_cast<size_t>(ind.dims().back());
  if (k > x->rank())
    return ctx.error("indices address " + std::to_string(k) + " dims of data of rank " +
                     std::to_string(x->rank()));
  std::vector<int64_t> want(ind.dims().begin(), ind.dims().end() - 1);
  want.insert(want.end(), x->dims().begin() + static_cast<int64_t>(k), x->dims().end());
  if (upd->dims() != want || upd->dtype() != x->dtype())
    return ctx.error("updates " + ir::dims_string(upd->dims()) + " should be " +
                     ir::dims_string(want));
  const int64_t slice = product(x->dims(), k, x->rank());
  const int64_t count = product(ind.dims(), 0, ind.rank() - 1);
  const auto xs = strides_of(x->dims());
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    int64_t off = 0;
    for (size_t d = 0; d < k; ++d) {
      XOPT_ASSIGN_OR_RETURN(int64_t i,
                            fix_index(ctx, indices[static_cast<size_t>(j) * k + d], x->dims()[d]));
      off += i * xs[d];
    }
    offsets[static_cast<size_t>(j)] = off;
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), x->dims()));
  copy_elements(*x, y);
  if (red == Reduction::kNone || x->dtype() == ir::DType::kString) {
    if (red != Reduction::kNone) return ctx.unsupported("reductions on strings are not defined");
    return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
      using U = typename decltype(tag)::type;
      U* dst = mutable_elems<U>(*y);
      const U* src = elems<U>(*upd);
      for (int64_t j = 0; j < count; ++j)
        std::copy(src + j * slice, src + (j + 1) * slice, dst + offsets[static_cast<size_t>(j)]);
      return Status::ok();
    });
  }
  return dispatch_all(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* dst = y->mutable_data<T>();
    const T* src = upd->data<T>();
    for (int64_t j = 0; j < count; ++j) {
      T* d = dst + offsets[static_cast<size_t>(j)];
      const T* s = src + j * slice;
      for (int64_t e = 0; e < slice; ++e) combine(d[e], s[e], red);
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Gather", 1, kLatestOpset, gather);
XOPT_CPU_KERNEL("", "GatherElements", 11, kLatestOpset, gather_elements);
XOPT_CPU_KERNEL("", "ScatterND", 11, kLatestOpset, scatter_nd);

}  // namespace xopt::exec
