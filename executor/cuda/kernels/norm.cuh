// Row normalizations: Softmax / LogSoftmax, LayerNormalization and com.microsoft
// SkipLayerNormalization. One block per row with warp-shuffle reductions; rows that fit are kept
// in shared memory between the passes. Semantics follow executor/cpu/kernels/reduce_softmax.cc,
// nn_norm.cc and nn_contrib.cc.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace xopt::cuda {

// Softmax (or LogSoftmax) of x viewed as [outer, n, inner] along n.
cudaError_t launch_softmax(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                           bool log, cudaStream_t stream);

// Per row r of `rows` rows of n floats:
//   v = x[r] (+ skip[r % skip_rows]) (+ bias)            (sum_out[r] = v when sum_out != null)
//   y[r] = (v - mean) / sqrt(var + eps) * gamma (+ beta)  (mean_out[r], inv_out[r] when non-null)
// gamma, beta and bias hold n values each; skip holds skip_rows rows (skip_rows divides rows).
struct LayerNormArgs {
  const float* x = nullptr;
  const float* skip = nullptr;
  const float* bias = nullptr;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* y = nullptr;
  float* sum_out = nullptr;
  float* mean_out = nullptr;
  float* inv_out = nullptr;
  int64_t rows = 0;
  int64_t n = 0;
  int64_t skip_rows = 1;
  float eps = 1e-5f;
};
cudaError_t launch_layer_norm(const LayerNormArgs& args, cudaStream_t stream);

}  // namespace xopt::cuda
