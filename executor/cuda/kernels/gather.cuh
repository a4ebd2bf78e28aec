// Gather and GatherElements with indices read on the device (int32 or int64; negative indices
// count from the end). An index out of range is clamped to the dim: the CPU reference rejects it,
// the GPU must not read outside the tensor. Elements of 1, 2, 4 or 8 bytes move bit-exactly.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

// y[o, k, e] = x[o, indices[k], e] for x [outer, dim, inner] and n_idx indices.
struct GatherPlan {
  int64_t outer = 0;
  int64_t dim = 0;
  int64_t n_idx = 0;
  int64_t inner = 0;
};
cudaError_t launch_gather(const void* x, const void* indices, bool indices_int64, void* y,
                          size_t elem_size, const GatherPlan& plan, cudaStream_t stream);

// y[i] = x[base(i) + indices[i] * axis_stride]: operand 0 of `p` gives base(i) (x's strides over
// the indices' dims with 0 along the axis), operand 1 the index offset of i.
cudaError_t launch_gather_elements(const void* x, const void* indices, bool indices_int64, void* y,
                                   size_t elem_size, const IndexPlan& p, int64_t axis_dim,
                                   int64_t axis_stride, cudaStream_t stream);

}  // namespace xopt::cuda
