// Helpers shared by the kernels of issue 13's op families (nn_attention.cc, nn_rmsnorm.cc,
// signal_dft.cc, ...): float tensors read into double and written back with the element type's
// rounding, and broadcasting index arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/cpu/dispatch.h"
#include "executor/cpu/kernel.h"
#include "ir/dims_string.h"
#include "ir/tensor.h"

namespace xopt::exec::ops {

// The newest ai.onnx opset (ONNX 1.23 defines up to 28).
inline constexpr int kLatest = 28;

inline int64_t prod(const std::vector<int64_t>& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < d.size() && i < to; ++i) p *= d[i];
  return p;
}

inline std::vector<int64_t> row_strides(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

// Every element of a numeric or bool tensor as a double.
inline std::vector<double> doubles(const ir::Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == ir::DType::kBool) {
    const bool* p = t.data<bool>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i] ? 1.0 : 0.0;
    return v;
  }
  const Status st = dispatch_numeric(t.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(to_compute(p[i]));
    return Status::ok();
  });
  if (!st.is_ok())
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.as_double(static_cast<int64_t>(i));
  return v;
}

// Writes `v` into `t` (same numel), converting to its element type (numeric or bool).
inline Status store(const std::vector<double>& v, ir::Tensor* t) {
  if (t->dtype() == ir::DType::kBool) {
    bool* p = t->mutable_data<bool>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = v[i] != 0.0;
    return Status::ok();
  }
  return dispatch_numeric(t->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* p = t->mutable_data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(v[i]));
    return Status::ok();
  });
}

// `x` rounded to element type `t` (float16, bfloat16, float; double and others unchanged).
inline double round_to(ir::DType t, double x) {
  switch (t) {
    case ir::DType::kFloat:
      return static_cast<double>(static_cast<float>(x));
    case ir::DType::kFloat16:
      return ir::half_to_float(ir::float_to_half(static_cast<float>(x)));
    case ir::DType::kBFloat16:
      return ir::bfloat16_to_float(ir::float_to_bfloat16(static_cast<float>(x)));
    default:
      return x;
  }
}
inline void round_all(ir::DType t, std::vector<double>& v) {
  if (t == ir::DType::kDouble) return;
  for (double& x : v) x = round_to(t, x);
}

// Offsets into a tensor of dims `src` broadcast (numpy, right-aligned) to `dst`: element i of the
// row-major `dst` reads element result[i] of `src`. Requires src to broadcast to dst.
inline std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& src,
                                              const std::vector<int64_t>& dst) {
  const size_t r = dst.size(), pad = r - src.size();
  std::vector<int64_t> st(r, 0);
  const auto ss = row_strides(src);
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] != 1) st[pad + i] = ss[i];
  const int64_t n = prod(dst);
  std::vector<int64_t> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    out[static_cast<size_t>(k)] = off;
    for (size_t a = r; a-- > 0;) {
      off += st[a];
      if (++idx[a] < dst[a]) break;
      off -= st[a] * dst[a];
      idx[a] = 0;
    }
  }
  return out;
}

// Whether `src` broadcasts to `dst` (numpy rules, unidirectional).
inline bool broadcasts_to(const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  if (src.size() > dst.size()) return false;
  const size_t pad = dst.size() - src.size();
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] != 1 && src[i] != dst[pad + i]) return false;
  return true;
}

}  // namespace xopt::exec::ops
