// Numpy-style (multidirectional) broadcasting helpers for CPU kernels. Header-only; any kernel may
// use it.
//
//   XOPT_ASSIGN_OR_RETURN(auto out_dims, broadcast_shapes({a.dims(), b.dims()}));
//   BroadcastPlan p = make_broadcast_plan(out_dims, {a.dims(), b.dims()});
//   for_each_broadcast(p, [&](int64_t i, const int64_t* off) { y[i] = f(pa[off[0]], pb[off[1]]);
//   });
//
// for_each_broadcast_run hands out whole runs along the innermost dim instead (tight loops), over
// any sub-range of the output (one chunk of a parallel_for).
//
// Rules (ONNX "multidirectional broadcasting", same as numpy): shapes are aligned on the right; a
// dimension of size 1 stretches to the other size; any other mismatch is an error. A dimension of
// size 0 wins over 1 (the result is empty). "Unidirectional" broadcasting (PRelu slope before opset
// 7, Gemm's C) is the same with the constraint that the result equals the first shape; use
// broadcast_to_check() for it.
//
// Element offsets, not byte offsets, are passed to the callback. The output index `i` runs
// 0..numel-1 in row-major order, so kernels may read their inputs at the offsets and write y[i] in
// one pass; when an output aliases an input of the same shape (in-place), element i is read before
// it is written.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/dims_string.h"

namespace xopt::exec {

// The broadcast result shape of all `shapes`, or an invalid-model error naming the two that
// disagree.
inline Result<std::vector<int64_t>> broadcast_shapes(
    const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  std::vector<int> from(rank, -1);  // which input fixed each dim (for the error message)
  for (size_t k = 0; k < shapes.size(); ++k) {
    const auto& s = shapes[k];
    size_t pad = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i];
      int64_t& o = out[pad + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        from[pad + i] = static_cast<int>(k);
        continue;
      }
      return invalid_model("shapes " + ir::dims_string(shapes[static_cast<size_t>(from[pad + i])]) +
                           " and " + ir::dims_string(s) + " cannot be broadcast together");
    }
  }
  return out;
}

// Checks that `from` broadcasts (unidirectionally) to exactly `to`.
inline Status broadcast_to_check(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  bool ok = from.size() <= to.size();
  for (size_t i = 0; ok && i < from.size(); ++i) {
    int64_t d = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    ok = d == t || d == 1;
  }
  if (ok) return Status::ok();
  return invalid_model("shape " + ir::dims_string(from) + " cannot be broadcast to " +
                       ir::dims_string(to));
}

// Element strides of a tensor of dims `in` read as if it had dims `out` (0 along broadcast
// dimensions). `in` must broadcast to `out`.
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t s = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t ii = in.size() - 1 - i, oi = out.size() - 1 - i;
    st[oi] = in[ii] == 1 ? 0 : s;
    s *= in[ii];
  }
  return st;
}

// The iteration for one broadcast: output dims and the strides of every input along them, with runs
// of dimensions merged where every input is contiguous (or constant) across them.
struct BroadcastPlan {
  std::vector<int64_t> dims;                  // merged output dims (at least one)
  std::vector<std::vector<int64_t>> strides;  // per input, per merged dim
  int64_t numel = 1;
  bool all_same = false;  // every input has the output's shape: offsets equal the output index
};

inline BroadcastPlan make_broadcast_plan(const std::vector<int64_t>& out_dims,
                                         const std::vector<std::vector<int64_t>>& in_dims) {
  BroadcastPlan p;
  for (int64_t d : out_dims) p.numel *= d;
  p.all_same = true;
  for (const auto& s : in_dims) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    if (n != p.numel) p.all_same = false;
  }
  std::vector<std::vector<int64_t>> st;
  for (const auto& s : in_dims) st.push_back(broadcast_strides(s, out_dims));
  // Merge dimension i into i+1 (the faster one) when every input's stride allows it.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> mst(in_dims.size());
  for (size_t i = 0; i < out_dims.size(); ++i) {
    if (out_dims[i] == 1) continue;  // size-1 dims iterate once: drop them
    if (!dims.empty()) {
      bool can = true;
      for (size_t k = 0; k < st.size(); ++k) can = can && mst[k].back() == st[k][i] * out_dims[i];
      if (can) {
        dims.back() *= out_dims[i];
        for (size_t k = 0; k < st.size(); ++k) mst[k].back() = st[k][i];
        continue;
      }
    }
    dims.push_back(out_dims[i]);
    for (size_t k = 0; k < st.size(); ++k) mst[k].push_back(st[k][i]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& m : mst) m.push_back(0);
  }
  p.dims = std::move(dims);
  p.strides = std::move(mst);
  return p;
}

// Calls g(i, len, off, step) for every run of output elements [i, i + len) inside [lo, hi) along
// the innermost merged dim, in row-major order: input k's element for output i + j is at
// off[k] + j * step[k].
template <typename G>
void for_each_broadcast_run(const BroadcastPlan& p, int64_t lo, int64_t hi, G&& g) {
  hi = std::min(hi, p.numel);
  if (lo >= hi) return;
  const size_t n_in = p.strides.size(), rank = p.dims.size();
  const int64_t inner = p.dims[rank - 1];
  std::vector<int64_t> step(n_in), base(n_in, 0), off(n_in), idx(rank, 0);
  for (size_t k = 0; k < n_in; ++k) step[k] = p.strides[k][rank - 1];
  // The outer index of `lo` and the input offsets it starts at.
  int64_t rest = lo / inner, j = lo % inner;
  for (size_t d = rank - 1; d-- > 0;) {
    idx[d] = rest % p.dims[d];
    rest /= p.dims[d];
    for (size_t k = 0; k < n_in; ++k) base[k] += idx[d] * p.strides[k][d];
  }
  for (int64_t i = lo; i < hi;) {
    const int64_t len = std::min(inner - j, hi - i);
    for (size_t k = 0; k < n_in; ++k) off[k] = base[k] + j * step[k];
    g(i, len, static_cast<const int64_t*>(off.data()), static_cast<const int64_t*>(step.data()));
    i += len;
    j = 0;
    // Advance the outer index (all dims but the last).
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < n_in; ++k) base[k] += p.strides[k][d];
      if (++idx[d] < p.dims[d]) break;
      for (size_t k = 0; k < n_in; ++k) base[k] -= p.strides[k][d] * p.dims[d];
      idx[d] = 0;
    }
  }
}

// Calls f(i, off) for every output element i (row-major), off[k] being the element offset in input
// k.
template <typename F>
void for_each_broadcast(const BroadcastPlan& p, F&& f) {
  std::vector<int64_t> o(p.strides.size());
  for_each_broadcast_run(p, 0, p.numel,
                         [&](int64_t i, int64_t len, const int64_t* off, const int64_t* step) {
                           for (size_t k = 0; k < o.size(); ++k) o[k] = off[k];
                           for (int64_t j = 0; j < len; ++j) {
                             f(i + j, static_cast<const int64_t*>(o.data()));
                             for (size_t k = 0; k < o.size(); ++k) o[k] += step[k];
                           }
                         });
}

// Convenience: plan and iterate in one call.
template <typename F>
void for_each_broadcast(const std::vector<int64_t>& out_dims,
                        const std::vector<std::vector<int64_t>>& in_dims, F&& f) {
  for_each_broadcast(make_broadcast_plan(out_dims, in_dims), std::forward<F>(f));
}

}  // namespace xopt::exec
