// Per-element and linear-algebra math: Einsum (any equation: repeated labels, ellipsis
// broadcasting, implicit output), Det (LU with partial pivoting), CumProd, BitShift and BitCast.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec::ops {
namespace {

// Einsum by direct summation over every label: for each output position and each assignment of
// the contracted labels, the product of the operands' elements. Labels are letters; the ellipsis
// becomes the labels '0', '1', ... (right-aligned, broadcast).
Status einsum(KernelContext& ctx) {
  std::string eq;
  for (char c : ctx.node().attr_string("equation", ""))
    if (c != ' ') eq += c;
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
    return ctx.error("equation '" + eq + "' does not match the number of inputs");
  std::vector<std::string> labels(terms.size());  // per operand, one label per dim
  size_t ell_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    if (ctx.input(k) == nullptr) return ctx.error("an operand is missing");
    const size_t dots = terms[k].find("...");
    const size_t letters = terms[k].size() - (dots == std::string::npos ? 0 : 3);
    const size_t rank = ctx.input(k)->rank();
    if (dots == std::string::npos ? rank != letters : rank < letters)
      return ctx.error("operand " + std::to_string(k) + " " +
                       ir::dims_string(ctx.input(k)->dims()) + " does not match '" + terms[k] +
                       "'");
    if (dots != std::string::npos) ell_rank = std::max(ell_rank, rank - letters);
  }
  std::map<char, int64_t> size;
  std::map<char, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    const auto& dims = ctx.input(k)->dims();
    const std::string& term = terms[k];
    const size_t dots = term.find("...");
    const size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    const size_t ell = dims.size() - letters;
    std::string& lab = labels[k];
    for (size_t i = 0; i < term.size(); ++i) {
      if (term[i] == '.') {
        if (i == dots)
          for (size_t e = 0; e < ell; ++e) lab += static_cast<char>('0' + (ell_rank - ell + e));
        continue;
      }
      lab += term[i];
    }
    for (size_t d = 0; d < lab.size(); ++d) {
      const char c = lab[d];
      if (!(c >= '0' && c <= '9')) ++count[c];
      auto it = size.find(c);
      if (it == size.end() || it->second == 1)
        size[c] = dims[d];
      else if (dims[d] != 1 && dims[d] != it->second)
        return ctx.error("label '" + std::string(1, c) + "' has sizes " +
                         std::to_string(it->second) + " and " + std::to_string(dims[d]));
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (rhs[i] == '.') {
        if (rhs.compare(i, 3, "...") == 0) {
          for (size_t e = 0; e < ell_rank; ++e) out += static_cast<char>('0' + e);
          i += 2;
        }
        continue;
      }
      if (!size.count(rhs[i]))
        return ctx.error("output label '" + std::string(1, rhs[i]) + "' is unknown");
      out += rhs[i];
    }
  } else {
    for (size_t e = 0; e < ell_rank; ++e) out += static_cast<char>('0' + e);
    for (const auto& [c, n] : count)
      if (n == 1) out += c;
  }
  std::string all = out;
  for (const auto& [c, n] : size)
    if (all.find(c) == std::string::npos) all += c;
  std::vector<int64_t> extent(all.size());
  for (size_t i = 0; i < all.size(); ++i) extent[i] = size[all[i]];
  // Per operand, the stride of each label in `all` (summed when a label repeats: a diagonal;
  // 0 where the operand broadcasts).
  std::vector<std::vector<int64_t>> strides(terms.size(), std::vector<int64_t>(all.size(), 0));
  std::vector<std::vector<double>> vals(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    const auto& dims = ctx.input(k)->dims();
    const auto st = row_strides(dims);
    for (size_t d = 0; d < labels[k].size(); ++d) {
      if (dims[d] == 1 && size[labels[k][d]] != 1) continue;
      strides[k][all.find(labels[k][d])] += st[d];
    }
    vals[k] = doubles(*ctx.input(k));
  }
  std::vector<int64_t> odims(extent.begin(), extent.begin() + static_cast<long>(out.size()));
  const int64_t n_out = prod(odims);
  const int64_t n_sum = prod(extent, out.size());
  std::vector<double> y(static_cast<size_t>(n_out), 0.0);
  std::vector<int64_t> idx(all.size(), 0);
  std::vector<int64_t> off(terms.size(), 0);
  for (int64_t o = 0; o < n_out; ++o) {
    double acc = 0.0;
    for (int64_t s = 0; s < n_sum; ++s) {
      double p = 1.0;
      for (size_t k = 0; k < terms.size(); ++k) p *= vals[k][static_cast<size_t>(off[k])];
      acc += p;
      // Advance the whole index (contracted labels fastest, then output labels).
      for (size_t a = all.size(); a-- > 0;) {
        for (size_t k = 0; k < terms.size(); ++k) off[k] += strides[k][a];
        if (++idx[a] < extent[a]) break;
        for (size_t k = 0; k < terms.size(); ++k) off[k] -= strides[k][a] * extent[a];
        idx[a] = 0;
      }
    }
    y[static_cast<size_t>(o)] = acc;
    if (n_sum == 0) {
      // Nothing to sum: still step to the next output position.
      for (size_t a = out.size(); a-- > 0;) {
        for (size_t k = 0; k < terms.size(); ++k) off[k] += strides[k][a];
        if (++idx[a] < extent[a]) break;
        for (size_t k = 0; k < terms.size(); ++k) off[k] -= strides[k][a] * extent[a];
        idx[a] = 0;
      }
    }
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, ctx.input(0)->dtype(), odims));
  return store(y, yt);
}

// Det of each trailing [n, n] matrix.
Status det(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const size_t r = x->rank();
  if (r < 2 || x->dims()[r - 1] != x->dims()[r - 2]) return ctx.error("input must be [..., n, n]");
  const int64_t n = x->dims()[r - 1];
  std::vector<int64_t> odims(x->dims().begin(), x->dims().end() - 2);
  const int64_t batch = prod(odims);
  const std::vector<double> xv = doubles(*x);
  std::vector<double> y(static_cast<size_t>(batch));
  std::vector<double> m(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < batch; ++b) {
    std::copy(xv.begin() + b * n * n, xv.begin() + (b + 1) * n * n, m.begin());
    double d = 1.0;
    for (int64_t c = 0; c < n; ++c) {
      int64_t piv = c;
      for (int64_t i = c + 1; i < n; ++i)
        if (std::fabs(m[static_cast<size_t>(i * n + c)]) >
            std::fabs(m[static_cast<size_t>(piv * n + c)]))
          piv = i;
      if (m[static_cast<size_t>(piv * n + c)] == 0.0) {
        d = 0.0;
        break;
      }
      if (piv != c) {
        for (int64_t j = 0; j < n; ++j)
          std::swap(m[static_cast<size_t>(piv * n + j)], m[static_cast<size_t>(c * n + j)]);
        d = -d;
      }
      const double p = m[static_cast<size_t>(c * n + c)];
      d *= p;
      for (int64_t i = c + 1; i < n; ++i) {
        const double f = m[static_cast<size_t>(i * n + c)] / p;
        for (int64_t j = c; j < n; ++j)
          m[static_cast<size_t>(i * n + j)] -= f * m[static_cast<size_t>(c * n + j)];
      }
    }
    y[static_cast<size_t>(b)] = d;
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), odims));
  return store(y, yt);
}

// CumProd along one axis; `exclusive` leaves out the element itself (starting from 1), `reverse`
// runs from the end.
Status cumprod(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* axis_t = ctx.input(1);
  if (x == nullptr || axis_t == nullptr) return ctx.error("x and axis are required");
  if (axis_t->numel() != 1) return ctx.error("axis must be a scalar");
  const auto rank = static_cast<int64_t>(x->rank());
  int64_t axis = axis_t->as_int64(0);
  if (axis < -rank || axis >= rank) return ctx.error("axis is out of range");
  if (axis < 0) axis += rank;
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_int("reverse", 0) != 0;
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = prod(x->dims(), 0, a), n = x->dims()[a], inner = prod(x->dims(), a + 1);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), x->dims()));
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = x->data<T>();
    T* dst = y->mutable_data<T>();
    std::vector<C> acc(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      std::fill(acc.begin(), acc.end(), C{1});
      for (int64_t k = 0; k < n; ++k) {
        const int64_t kk = reverse ? n - 1 - k : k;
        const T* s = src + (o * n + kk) * inner;
        T* t = dst + (o * n + kk) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const C v = to_compute(s[i]);
          C& r = acc[static_cast<size_t>(i)];
          if (exclusive) {
            t[i] = from_compute<T>(r);
            r = static_cast<C>(r * v);
          } else {
            r = static_cast<C>(r * v);
            t[i] = from_compute<T>(r);
          }
        }
      }
    }
    return Status::ok();
  });
}

// BitShift on unsigned integers with numpy broadcasting; shifts of the type's width or more give
// 0.
Status bitshift(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* s = ctx.input(1);
  if (x == nullptr || s == nullptr) return ctx.error("X and Y are required");
  if (x->dtype() != s->dtype()) return ctx.error("X and Y differ in type");
  const std::string dir = ctx.node().attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return ctx.error("direction must be LEFT or RIGHT");
  const auto& a = x->dims();
  const auto& b = s->dims();
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> odims(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1)
      return ctx.error("X " + ir::dims_string(a) + " and Y " + ir::dims_string(b) +
                       " do not broadcast");
    odims[i] = da == 1 ? db : da;
  }
  const auto oa = broadcast_offsets(a, odims), ob = broadcast_offsets(b, odims);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), odims));
  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xa = x->data<T>();
    const T* sb = s->data<T>();
    T* out = y->mutable_data<T>();
    constexpr uint64_t bits = sizeof(T) * 8;
    for (size_t i = 0; i < oa.size(); ++i) {
      const uint64_t v = xa[oa[i]], sh = sb[ob[i]];
      out[i] = sh >= bits ? T{0} : static_cast<T>(dir == "LEFT" ? v << sh : v >> sh);
    }
    return Status::ok();
  };
  switch (x->dtype()) {
    case ir::DType::kUInt8:
      return run(TypeTag<uint8_t>{});
    case ir::DType::kUInt16:
      return run(TypeTag<uint16_t>{});
    case ir::DType::kUInt32:
      return run(TypeTag<uint32_t>{});
    case ir::DType::kUInt64:
      return run(TypeTag<uint64_t>{});
    default:
      return ctx.unsupported("BitShift takes unsigned integers");
  }
}

// BitCast: the input's bytes as type `to` (same width, same shape).
Status bitcast(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const auto to = static_cast<ir::DType>(ctx.node().attr_int("to", 0));
  if (x->dtype() == ir::DType::kString || to == ir::DType::kString || ir::dtype_size(to) == 0 ||
      ir::dtype_size(to) != ir::dtype_size(x->dtype()))
    return ctx.error("BitCast needs non-string types of one bit width");
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, to, x->dims()));
  if (x->nbytes() > 0) std::memcpy(y->mutable_raw_data(), x->raw_data(), x->nbytes());
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "Einsum", 12, kLatest, einsum);
XOPT_CPU_KERNEL("", "Det", 11, kLatest, det);
XOPT_CPU_KERNEL("", "CumProd", 26, kLatest, cumprod);
XOPT_CPU_KERNEL("", "BitShift", 11, kLatest, bitshift);
XOPT_CPU_KERNEL("", "BitCast", 26, kLatest, bitcast);

}  // namespace xopt::exec::ops
