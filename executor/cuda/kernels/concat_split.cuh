// Concat and Split along one axis: the joined tensor is [outer, row] and each part owns the
// columns [col[k], col[k + 1]) of every row. One kernel walks the joined tensor (or a column range
// of it) and finds each element's part; runs move as words of up to 16 bytes where sizes and
// addresses allow.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace xopt::cuda {

inline constexpr int kMaxParts = 32;

// Parts [0, parts) cover the joined columns [col[0], col[parts]) (col[0] may be > 0 when a node
// with more than kMaxParts parts is split into several launches); elements, not bytes.
struct PartsPlan {
  int parts = 0;
  int64_t outer = 0;
  int64_t row = 0;  // elements in one row of the joined tensor
  int64_t col[kMaxParts + 1] = {};
  void* ptr[kMaxParts] = {};  // the parts (Concat: inputs; Split: outputs)
};

// joined = Concat(parts).
cudaError_t launch_concat(void* joined, const PartsPlan& plan, size_t elem_size,
                          cudaStream_t stream);
// parts = Split(joined).
cudaError_t launch_split(const void* joined, const PartsPlan& plan, size_t elem_size,
                         cudaStream_t stream);

}  // namespace xopt::cuda
