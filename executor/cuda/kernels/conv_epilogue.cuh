// Device helpers shared by the library-backed kernels (conv, gemm): the fused epilogue that adds a
// per-channel bias and a residual and applies an activation in one pass, zero padding of the
// spatial dims (cuDNN takes symmetric pads only), and the broadcast copy of Gemm's C.
// Plain launchers: pointers, sizes, stream; nvcc never sees the IR.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

// The activations of com.microsoft FusedConv / FusedGemm, with the semantics of
// executor/cpu/kernels/nn_util.h (Activation::apply). Clip: alpha = min, beta = max.
enum class ActKind : int {
  kIdentity,
  kRelu,
  kTanh,
  kSigmoid,
  kLeakyRelu,
  kClip,
  kHardSigmoid,
  kElu,
  kSelu,
  kThresholdedRelu,
  kSoftplus,
  kSoftsign,
  kScaledTanh,
  kParametricSoftplus
};

struct ActParams {
  ActKind kind = ActKind::kIdentity;
  float alpha = 0, beta = 0, gamma = 0;
};

// Element type `t` of every pointer below: float32, float16 or bfloat16 (the half types computed
// in float, rounded once).

// y[i] = act(y[i] + bias[(i / inner) % channels] + z[i]) for i < n. bias and z may be null.
cudaError_t launch_bias_act(ElemType t, void* y, const void* bias, const void* z, int64_t n,
                            int64_t channels, int64_t inner, ActParams act, cudaStream_t stream);

// Copies x [lead, in[0], ..., in[rank-1]] into y [lead, out[0], ...] with x's element (i0, ...)
// at (i0 + before[0], ...) and zeros elsewhere. rank <= 3.
cudaError_t launch_pad_spatial(ElemType t, const void* x, void* y, int64_t lead, int rank,
                               const int64_t* in, const int64_t* before, const int64_t* out,
                               cudaStream_t stream);

// y [m, n] = c broadcast, c being [c_rows, c_cols] with c_rows in {1, m} and c_cols in {1, n}.
cudaError_t launch_broadcast_2d(ElemType t, const void* c, void* y, int64_t m, int64_t n,
                                int64_t c_rows, int64_t c_cols, cudaStream_t stream);

}  // namespace xopt::cuda
