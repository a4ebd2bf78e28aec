// Strided copies: dst (contiguous, row-major over the plan's dims) = src read at the plan's element
// strides (0 to repeat, negative to reverse). Transpose, Expand, Tile and Slice are all this copy;
// a transpose of the contiguous dim runs through 32x32 shared-memory tiles, and contiguous runs
// move as wider words (up to 16 bytes) where sizes and alignment allow. Bit-exact for any element
// of 1, 2, 4 or 8 bytes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

// `src` already points at the first element read (Slice's start offset applied); operand 0 of `p`
// holds the source strides.
cudaError_t launch_strided_copy(const void* src, void* dst, size_t elem_size, const IndexPlan& p,
                                cudaStream_t stream);

}  // namespace xopt::cuda
