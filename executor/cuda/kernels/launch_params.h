// Plain structs that the compile functions (kernels/*.cc) fill at compile time and the launchers
// (kernels/*.cu) take by value: they become kernel parameters, so a launch reads no host memory and
// allocates nothing. Shared by our own kernel families; no CUDA or IR headers here.
#pragma once

#include <cstdint>
#include <vector>

namespace xopt::cuda {

// Most dims a kernel iterates over after merging (size-1 dims dropped, contiguous runs merged).
inline constexpr int kMaxDims = 8;

// Element types our own kernels compute on.
enum class ElemType : int { kFloat, kInt32, kInt64, kBool, kHalf, kBFloat16 };

// Whether an element type is one our float kernels take (float32, float16, bfloat16).
inline bool is_float_elem(ElemType t) {
  return t == ElemType::kFloat || t == ElemType::kHalf || t == ElemType::kBFloat16;
}

// A row-major iteration over `dims`, reading up to kMaxOperands operands at element strides that
// may be 0 (broadcast) or negative (Slice with negative steps).
inline constexpr int kMaxOperands = 8;
struct IndexPlan {
  int rank = 0;
  int operands = 0;
  int64_t numel = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
};

// Builds an IndexPlan for output dims `out` and per-operand element strides along them (same
// length as `out`): size-1 dims are dropped and a dim is merged into the previous one when every
// operand allows it. Returns false when more than kMaxDims dims remain.
inline bool make_index_plan(const std::vector<int64_t>& out,
                            const std::vector<std::vector<int64_t>>& strides, IndexPlan* p) {
  *p = IndexPlan{};
  p->operands = static_cast<int>(strides.size());
  if (p->operands > kMaxOperands) return false;
  p->numel = 1;
  for (int64_t d : out) p->numel *= d;
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(strides.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    if (!dims.empty()) {
      bool can = true;
      for (size_t k = 0; k < strides.size(); ++k)
        can = can && st[k].back() == strides[k][i] * out[i];
      if (can) {
        dims.back() *= out[i];
        for (size_t k = 0; k < strides.size(); ++k) st[k].back() = strides[k][i];
        continue;
      }
    }
    dims.push_back(out[i]);
    for (size_t k = 0; k < strides.size(); ++k) st[k].push_back(strides[k][i]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& s : st) s.push_back(0);
  }
  if (dims.size() > static_cast<size_t>(kMaxDims)) return false;
  p->rank = static_cast<int>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    p->dims[i] = dims[i];
    for (size_t k = 0; k < st.size(); ++k) p->strides[k][i] = st[k][i];
  }
  return true;
}

// Row-major element strides of `dims`.
inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Element strides of a tensor of dims `in` read as dims `out` (numpy broadcasting: aligned on the
// right, 0 along broadcast dims).
inline std::vector<int64_t> broadcast_strides_to(const std::vector<int64_t>& in,
                                                 const std::vector<int64_t>& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t s = 1;
  for (size_t i = 0; i < in.size() && i < out.size(); ++i) {
    size_t ii = in.size() - 1 - i, oi = out.size() - 1 - i;
    st[oi] = in[ii] == 1 ? 0 : s;
    s *= in[ii];
  }
  return st;
}

}  // namespace xopt::cuda
