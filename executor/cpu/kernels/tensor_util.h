// Helpers shared by the data-movement and reduction kernels (tensor_*.cc, reduce*.cc): element
// access that treats every dtype as an opaque element of its size (or a std::string), axis
// normalisation and integer inputs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "common/status.h"
#include "executor/cpu/dispatch.h"
#include "executor/cpu/kernel.h"
#include "executor/cpu/parallel.h"
#include "ir/dims_string.h"
#include "ir/tensor.h"

namespace xopt::exec {

// The last opset (of onnx 1.23's schema history) up to which an op with no later revision keeps
// its meaning; kernels of ops that have not changed register until it.
inline constexpr int kLatestOpset = 28;

// A 16-byte element (complex128) moved as a whole.
struct Blob16 {
  uint64_t lo, hi;
};

// For kernels that only move elements (Reshape, Transpose, Concat, Gather, Pad, ...): calls f with
// TypeTag<U>, U being an unsigned integer of the element's size, Blob16, or std::string.
template <typename F>
Status dispatch_by_size(ir::DType t, F&& f) {
  if (t == ir::DType::kString) return f(TypeTag<std::string>{});
  switch (ir::dtype_size(t)) {
    case 1:
      return f(TypeTag<uint8_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    case 8:
      return f(TypeTag<uint64_t>{});
    case 16:
      return f(TypeTag<Blob16>{});
    default:
      return unsupported(std::string("element type ") + std::string(ir::dtype_name(t)) +
                         " is not supported here");
  }
}

// Typed element pointers; for U = std::string the tensor's string vector.
template <typename U>
const U* elems(const ir::Tensor& t) {
  if constexpr (std::is_same_v<U, std::string>)
    return t.strings().data();
  else
    return static_cast<const U*>(t.raw_data());
}
template <typename U>
U* mutable_elems(ir::Tensor& t) {
  if constexpr (std::is_same_v<U, std::string>)
    return t.mutable_strings().data();
  else
    return static_cast<U*>(t.mutable_raw_data());
}

// Copies all elements of `src` into `dst` (same numel and dtype). In arena mode a view op's output
// slot may be its input's bytes (the plan's alias): then there is nothing to copy.
inline void copy_elements(const ir::Tensor& src, ir::Tensor* dst) {
  if (src.dtype() == ir::DType::kString) {
    auto& out = dst->mutable_strings();
    const auto& in = src.strings();
    for (size_t i = 0; i < in.size() && i < out.size(); ++i) out[i] = in[i];
    return;
  }
  size_t n = src.nbytes();
  if (n == 0) return;
  void* d = dst->mutable_raw_data();
  if (d != src.raw_data()) std::memmove(d, src.raw_data(), n);
}

inline int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}
inline int64_t product(const std::vector<int64_t>& dims) {
  return product(dims, 0, dims.size());
}

// Row-major element strides.
inline std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// `axis` in [-rank, rank) mapped to [0, rank), or an error naming the attribute.
inline Result<int64_t> normalize_axis(const KernelContext& ctx, int64_t axis, int64_t rank,
                                      const char* what = "axis") {
  if (axis < -rank || axis >= rank)
    return ctx.error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// Integer contents of input i (int32 or int64; any numeric type is accepted), or an error when the
// input is required and missing.
inline Result<std::vector<int64_t>> int_input(const KernelContext& ctx, size_t i,
                                              const char* what) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr) return ctx.error(std::string("input '") + what + "' is missing");
  if (!ir::is_integer(t->dtype()))
    return ctx.error(std::string("input '") + what + "' must be an integer tensor, got " +
                     std::string(ir::dtype_name(t->dtype())));
  return t->to_int64_vector();
}

// An input that is present and not empty; inputs whose optional name is "" come as nullptr.
inline bool has_input(const KernelContext& ctx, size_t i) {
  return ctx.input(i) != nullptr;
}

// Input 0, or an error saying it is missing.
inline Result<const ir::Tensor*> required_input(const KernelContext& ctx, size_t i,
                                                const char* what) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr) return ctx.error(std::string("input '") + what + "' is missing");
  return t;
}

// dst[i * ld_dst + j] = src[j * ld_src + i] for i, j < N: a square tile of a transpose. 4-byte
// elements move as 4x4 SSE blocks (x86-64 always has SSE2); others one at a time.
template <typename U, int64_t N>
inline void transpose_tile(const U* src, int64_t ld_src, U* dst, int64_t ld_dst) {
#if defined(__SSE2__)
  if constexpr (sizeof(U) == 4 && N % 4 == 0) {
    for (int64_t j = 0; j < N; j += 4)
      for (int64_t i = 0; i < N; i += 4) {
        const U* s = src + j * ld_src + i;
        __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(s));
        __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(s + ld_src));
        __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(s + 2 * ld_src));
        __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(s + 3 * ld_src));
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        U* t = dst + i * ld_dst + j;
        _mm_storeu_ps(reinterpret_cast<float*>(t), r0);
        _mm_storeu_ps(reinterpret_cast<float*>(t + ld_dst), r1);
        _mm_storeu_ps(reinterpret_cast<float*>(t + 2 * ld_dst), r2);
        _mm_storeu_ps(reinterpret_cast<float*>(t + 3 * ld_dst), r3);
      }
    return;
  }
#endif
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j) dst[i * ld_dst + j] = src[j * ld_src + i];
}

// dst[i] = src[offset(i)] for every i of an output of dims `dims` (row-major), where offset(i) is
// the dot product of i's multi-index with `src_strides`. Size-1 dims are dropped and dims that are
// contiguous in the source merged, so a copy that is contiguous underneath runs as block copies.
template <typename U>
void strided_copy(const U* src, U* dst, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& src_strides) {
  std::vector<int64_t> d, st;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return;
    if (dims[i] == 1) continue;
    if (!d.empty() && st.back() == src_strides[i] * dims[i]) {
      d.back() *= dims[i];
      st.back() = src_strides[i];
      continue;
    }
    d.push_back(dims[i]);
    st.push_back(src_strides[i]);
  }
  if (d.empty()) {
    dst[0] = src[0];
    return;
  }
  const size_t rank = d.size();
  const int64_t inner = d[rank - 1], inner_st = st[rank - 1];
  // A transpose: the source's contiguous dim c is not the output's last one. Copy square tiles of
  // (c, last) so that both the reads along c and the writes along the last dim stay in cache.
  constexpr int64_t kTile = 16;
  size_t c = rank;
  for (size_t k = 0; k + 1 < rank && inner_st != 1 && inner_st != 0; ++k)
    if (st[k] == 1 && d[k] >= kTile / 2 && inner >= kTile / 2) c = k;
  if (c < rank) {
    const auto dst_st = strides_of(d);
    std::vector<size_t> outer_dims;
    for (size_t k = 0; k + 1 < rank; ++k)
      if (k != c) outer_dims.push_back(k);
    std::vector<int64_t> oidx(outer_dims.size(), 0);
    const int64_t n_outer = product(d) / (d[c] * inner);
    int64_t sbase = 0, dbase = 0;
    for (int64_t o = 0; o < n_outer; ++o) {
      for (int64_t i0 = 0; i0 < d[c]; i0 += kTile)
        for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
          const int64_t i1 = std::min(i0 + kTile, d[c]), j1 = std::min(j0 + kTile, inner);
          if (i1 - i0 == kTile && j1 - j0 == kTile) {
            transpose_tile<U, kTile>(src + sbase + i0 + j0 * inner_st, inner_st,
                                     dst + dbase + i0 * dst_st[c] + j0, dst_st[c]);
            continue;
          }
          for (int64_t i = i0; i < i1; ++i) {
            const U* s = src + sbase + i;
            U* t = dst + dbase + i * dst_st[c];
            for (int64_t j = j0; j < j1; ++j) t[j] = s[j * inner_st];
          }
        }
      for (size_t q = outer_dims.size(); q-- > 0;) {
        const size_t k = outer_dims[q];
        sbase += st[k];
        dbase += dst_st[k];
        if (++oidx[q] < d[k]) break;
        sbase -= st[k] * d[k];
        dbase -= dst_st[k] * d[k];
        oidx[q] = 0;
      }
    }
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t base = 0;
  const int64_t total = product(d);
  for (int64_t o = 0; o < total; o += inner) {
    if (inner_st == 1) {
      std::copy(src + base, src + base + inner, dst + o);
    } else {
      const U* s = src + base;
      U* t = dst + o;
      for (int64_t j = 0; j < inner; ++j) t[j] = s[j * inner_st];
    }
    for (size_t k = rank - 1; k-- > 0;) {
      base += st[k];
      if (++idx[k] < d[k]) break;
      base -= st[k] * d[k];
      idx[k] = 0;
    }
  }
}

// strided_copy split along the outermost dim across the intra-op threads (each chunk a strided_copy
// of a block of output rows).
template <typename U>
void parallel_strided_copy(const U* src, U* dst, const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& src_strides) {
  size_t lead = 0;  // the outermost dim that is not 1
  while (lead < dims.size() && dims[lead] == 1) ++lead;
  const int64_t total = product(dims);
  if (lead == dims.size() || total < 2 * 16384) {
    strided_copy(src, dst, dims, src_strides);
    return;
  }
  const int64_t row = total / dims[lead];  // output elements per index of the lead dim
  parallel_for(dims[lead], std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row)),
               [&](int64_t lo, int64_t hi) {
                 std::vector<int64_t> d = dims;
                 d[lead] = hi - lo;
                 strided_copy(src + lo * src_strides[lead], dst + lo * row, d, src_strides);
               });
}

// Copies `x` into a new output of dims `out_dims`, reading it through the view `view_dims` /
// `src_strides` (see strided_copy); the view defaults to the output dims.
inline Status emit_strided(KernelContext& ctx, const ir::Tensor& x,
                           const std::vector<int64_t>& out_dims,
                           const std::vector<int64_t>& src_strides,
                           const std::vector<int64_t>* view_dims = nullptr, size_t output = 0) {
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(output, x.dtype(), out_dims));
  return dispatch_by_size(x.dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    parallel_strided_copy<U>(elems<U>(x), mutable_elems<U>(*y), view_dims ? *view_dims : out_dims,
                             src_strides);
    return Status::ok();
  });
}

}  // namespace xopt::exec
