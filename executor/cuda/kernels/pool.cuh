// Direct N-D (up to 3 spatial dims) max / average pooling for the windows cuDNN's pooling cannot
// express: asymmetric pads, dilations, ceil_mode windows that run past the end padding.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

struct PoolGeom {
  int rank = 0;  // spatial dims, <= 3
  int64_t in[3] = {}, out[3] = {}, kernel[3] = {}, stride[3] = {}, dilation[3] = {};
  int64_t pad_begin[3] = {}, pad_end[3] = {};
  bool max = true;                 // max, else average
  bool count_include_pad = false;  // average: divide by the taps inside the padded input
};

// x [nc, in...] -> y [nc, out...], with executor/cpu/kernels/nn_pool.cc's semantics; float32,
// float16 or bfloat16 (`t`, summed in float).
cudaError_t launch_pool(ElemType t, const void* x, void* y, int64_t nc, const PoolGeom& g,
                        cudaStream_t stream);

}  // namespace xopt::cuda
