// Pad (constant, reflect, edge, wrap) and Trilu: each output element computes which input element
// it reads (or the fill value). Elements of 1, 2, 4 or 8 bytes move bit-exactly. Semantics follow
// executor/cpu/kernels/tensor_pad.cc and tensor_trilu.cc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

enum class PadMode : int { kConstant, kReflect, kEdge, kWrap };

// Per dim d: output coordinate o reads input coordinate (o - pad_begin[d]) when it lies in
// [0, length[d]) (the extent left after cropping), else per the mode; then + crop_begin[d].
struct PadPlan {
  int rank = 0;
  PadMode mode = PadMode::kConstant;
  uint64_t value_bits = 0;          // the constant, as the element's bits
  const void* value_ptr = nullptr;  // or, when computed at run time, read from here on the device
  int64_t out_dims[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};
  int64_t length[kMaxDims] = {};
  int64_t pad_begin[kMaxDims] = {};
  int64_t crop_begin[kMaxDims] = {};
  int64_t numel = 0;
};
cudaError_t launch_pad(const void* x, void* y, size_t elem_size, const PadPlan& plan,
                       cudaStream_t stream);

// y = x with the elements outside the upper (j - i >= k) or lower (j - i <= k) triangle of the
// last two dims [rows, cols] zeroed; `batch` matrices.
cudaError_t launch_trilu(const void* x, void* y, size_t elem_size, int64_t batch, int64_t rows,
                         int64_t cols, int64_t k, bool upper, cudaStream_t stream);

}  // namespace xopt::cuda
