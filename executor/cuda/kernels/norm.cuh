// Row normalizations: Softmax / LogSoftmax, LayerNormalization and com.microsoft
// SkipLayerNormalization. One block per row with warp-shuffle reductions; rows that fit are kept
// in shared memory between the passes. Semantics follow executor/cpu/kernels/reduce_softmax.cc,
// nn_norm.cc and nn_contrib.cc.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

// Element types: x, y (and skip, bias, gamma, beta, sum_out) are all `type`: float32, float16 or
// bfloat16; the half types are loaded as float and every sum, max and exponent is float, with one
// rounding at the store. The statistics outputs (mean_out, inv_out) are `stat_type` (float32 or
// `type`).

// Softmax (or LogSoftmax) of x viewed as [outer, n, inner] along n.
cudaError_t launch_softmax(ElemType type, const void* x, void* y, int64_t outer, int64_t n,
                           int64_t inner, bool log, cudaStream_t stream);

// Per row r of `rows` rows of n elements:
//   v = x[r] (+ skip[r % skip_rows]) (+ bias)            (sum_out[r] = v when sum_out != null)
//   y[r] = (v - mean) / sqrt(var + eps) * gamma (+ beta)  (mean_out[r], inv_out[r] when non-null)
// gamma, beta and bias hold n values each; skip holds skip_rows rows (skip_rows divides rows).
struct LayerNormArgs {
  ElemType type = ElemType::kFloat;
  ElemType stat_type = ElemType::kFloat;
  const void* x = nullptr;
  const void* skip = nullptr;
  const void* bias = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  void* y = nullptr;
  void* sum_out = nullptr;
  void* mean_out = nullptr;
  void* inv_out = nullptr;
  int64_t rows = 0;
  int64_t n = 0;
  int64_t skip_rows = 1;
  float eps = 1e-5f;
};
cudaError_t launch_layer_norm(const LayerNormArgs& args, cudaStream_t stream);

}  // namespace xopt::cuda
