// ScatterElements (with reduction none / add / mul / min / max), the legacy Scatter, GatherND
// (with batch_dims) and TensorScatter (KV-cache writes, linear or circular).
#include <algorithm>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec::ops {
namespace {

Result<int64_t> fix(const KernelContext& ctx, int64_t i, int64_t dim) {
  if (i < -dim || i >= dim)
    return ctx.error("index " + std::to_string(i) + " is out of range for a dim of " +
                     std::to_string(dim));
  return i < 0 ? i + dim : i;
}

// y = data; y[idx with axis coordinate indices[idx]] (op)= updates[idx] for each idx of indices.
Status scatter_elements(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* ind = ctx.input(1);
  const ir::Tensor* upd = ctx.input(2);
  if (x == nullptr || ind == nullptr || upd == nullptr)
    return ctx.error("data, indices and updates are required");
  const size_t rank = x->rank();
  if (ind->rank() != rank || upd->dims() != ind->dims())
    return ctx.error("indices and updates must have one shape of data's rank");
  int64_t axis = ctx.node().attr_int("axis", 0);
  if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank))
    return ctx.error("axis is out of range");
  if (axis < 0) axis += static_cast<int64_t>(rank);
  const auto a = static_cast<size_t>(axis);
  const std::string red = ctx.node().attr_string("reduction", "none");
  if (red != "none" && red != "add" && red != "mul" && red != "min" && red != "max")
    return ctx.error("unknown reduction '" + red + "'");
  std::vector<int64_t> iv = ind->to_int64_vector();
  for (int64_t& i : iv) {
    XOPT_ASSIGN_OR_RETURN(i, fix(ctx, i, x->dims()[a]));
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), x->dims()));
  copy_elements(*x, y);
  const auto xs = row_strides(x->dims());
  // Offsets in data of each index position.
  std::vector<int64_t> off(iv.size());
  {
    std::vector<int64_t> idx(rank, 0);
    for (size_t k = 0; k < iv.size(); ++k) {
      int64_t o = 0;
      for (size_t d = 0; d < rank; ++d) o += (d == a ? iv[k] : idx[d]) * xs[d];
      off[k] = o;
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < ind->dims()[d]) break;
        idx[d] = 0;
      }
    }
  }
  if (red == "none")
    return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
      using U = typename decltype(tag)::type;
      const U* u = elems<U>(*upd);
      U* dst = mutable_elems<U>(*y);
      for (size_t k = 0; k < off.size(); ++k) dst[off[k]] = u[k];
      return Status::ok();
    });
  auto apply = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* u = upd->data<T>();
    T* dst = y->mutable_data<T>();
    for (size_t k = 0; k < off.size(); ++k) {
      const auto cur = to_compute(dst[off[k]]);
      const auto v = to_compute(u[k]);
      decltype(cur + v) r;
      if (red == "add")
        r = cur + v;
      else if (red == "mul")
        r = cur * v;
      else if (red == "min")
        r = std::min<decltype(cur + v)>(cur, v);
      else
        r = std::max<decltype(cur + v)>(cur, v);
      dst[off[k]] = from_compute<T>(r);
    }
    return Status::ok();
  };
  if (x->dtype() == ir::DType::kBool) {
    bool* dst = y->mutable_data<bool>();
    const bool* u = upd->data<bool>();
    for (size_t k = 0; k < off.size(); ++k) {
      bool& d = dst[off[k]];
      d = (red == "add" || red == "max") ? (d || u[k]) : (d && u[k]);
    }
    return Status::ok();
  }
  return dispatch_numeric(x->dtype(), apply);
}

// GatherND: y[b..., i...] = data[b..., indices[b..., i..., :], ...] with batch_dims leading dims
// shared.
Status gather_nd(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* ind = ctx.input(1);
  if (x == nullptr || ind == nullptr) return ctx.error("data and indices are required");
  const int64_t b = ctx.opset() >= 12 ? ctx.node().attr_int("batch_dims", 0) : 0;
  const auto r = static_cast<int64_t>(x->rank()), q = static_cast<int64_t>(ind->rank());
  if (q < 1 || b < 0 || b >= std::min(r, q)) return ctx.error("bad batch_dims or indices rank");
  const int64_t last = ind->dims().back();
  if (last < 1 || last > r - b) return ctx.error("indices' last dim is out of range");
  for (int64_t i = 0; i < b; ++i)
    if (x->dims()[static_cast<size_t>(i)] != ind->dims()[static_cast<size_t>(i)])
      return ctx.error("batch dims of data and indices differ");
  std::vector<int64_t> odims(ind->dims().begin(), ind->dims().end() - 1);
  odims.insert(odims.end(), x->dims().begin() + b + last, x->dims().end());
  const int64_t nbatch = prod(x->dims(), 0, static_cast<size_t>(b));
  const int64_t slice = prod(x->dims(), static_cast<size_t>(b + last));
  const int64_t batch_stride = prod(x->dims(), static_cast<size_t>(b));
  const int64_t per_batch = prod(ind->dims(), static_cast<size_t>(b), ind->rank() - 1);
  const auto xs = row_strides(x->dims());
  const std::vector<int64_t> iv = ind->to_int64_vector();
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), odims));
  std::vector<int64_t> offs(static_cast<size_t>(nbatch * per_batch));
  for (int64_t bi = 0; bi < nbatch; ++bi)
    for (int64_t k = 0; k < per_batch; ++k) {
      int64_t o = bi * batch_stride;
      for (int64_t j = 0; j < last; ++j) {
        const auto d = static_cast<size_t>(b + j);
        XOPT_ASSIGN_OR_RETURN(
            int64_t i,
            fix(ctx, iv[static_cast<size_t>((bi * per_batch + k) * last + j)], x->dims()[d]));
        o += i * xs[d];
      }
      offs[static_cast<size_t>(bi * per_batch + k)] = o;
    }
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    for (size_t k = 0; k < offs.size(); ++k)
      std::copy(src + offs[k], src + offs[k] + slice, dst + static_cast<int64_t>(k) * slice);
    return Status::ok();
  });
}

// TensorScatter(past_cache, update, write_indices): present = past with update written along
// `axis` (default -2) from write_indices[batch] (0 when absent), modulo the cache length when
// mode is "circular".
Status tensor_scatter(KernelContext& ctx) {
  const ir::Tensor* past = ctx.input(0);
  const ir::Tensor* upd = ctx.input(1);
  const ir::Tensor* wi = ctx.input(2);
  if (past == nullptr || upd == nullptr) return ctx.error("past_cache and update are required");
  const auto rank = static_cast<int64_t>(past->rank());
  if (upd->rank() != past->rank() || rank < 2) return ctx.error("update and cache ranks differ");
  int64_t axis = ctx.node().attr_int("axis", -2);
  if (axis < -rank || axis >= rank) return ctx.error("axis is out of range");
  if (axis < 0) axis += rank;
  if (axis == 0) return ctx.error("axis must not be the batch axis");
  const auto a = static_cast<size_t>(axis);
  for (size_t d = 0; d < past->rank(); ++d)
    if (d != a && past->dims()[d] != upd->dims()[d])
      return ctx.error("update " + ir::dims_string(upd->dims()) + " does not match cache " +
                       ir::dims_string(past->dims()));
  const bool circular = ctx.node().attr_string("mode", "linear") == "circular";
  const int64_t batch = past->dims()[0], max_len = past->dims()[a], len = upd->dims()[a];
  std::vector<int64_t> w(static_cast<size_t>(batch), 0);
  if (wi != nullptr) {
    w = wi->to_int64_vector();
    if (static_cast<int64_t>(w.size()) != batch) return ctx.error("write_indices must be [batch]");
  }
  const int64_t mid = prod(past->dims(), 1, a), inner = prod(past->dims(), a + 1);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, past->dtype(), past->dims()));
  copy_elements(*past, y);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t s = 0; s < len; ++s) {
      int64_t c = w[static_cast<size_t>(bi)] + s;
      if (circular) c %= max_len;
      if (c < 0 || c >= max_len) return ctx.error("a write position is past the cache");
    }
  return dispatch_by_size(past->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*upd);
    U* dst = mutable_elems<U>(*y);
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t m = 0; m < mid; ++m)
        for (int64_t s = 0; s < len; ++s) {
          int64_t c = w[static_cast<size_t>(bi)] + s;
          if (circular) c %= max_len;
          const U* from = src + ((bi * mid + m) * len + s) * inner;
          std::copy(from, from + inner, dst + ((bi * mid + m) * max_len + c) * inner);
        }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "ScatterElements", 11, kLatest, scatter_elements);
XOPT_CPU_KERNEL("", "Scatter", 9, 10, scatter_elements);
XOPT_CPU_KERNEL("", "GatherND", 11, kLatest, gather_nd);
XOPT_CPU_KERNEL("", "TensorScatter", 24, kLatest, tensor_scatter);

}  // namespace xopt::exec::ops
