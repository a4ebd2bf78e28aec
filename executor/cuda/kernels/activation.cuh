// Unary math and activations, and the Gelu family with an optional bias added first (BiasGelu,
// FastGelu). Semantics follow executor/cpu/kernels/elementwise_{unary,activation,gelu}.cc.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

enum class UnaryOp : int {
  // float32, int32, int64
  kRelu,
  kAbs,
  kNeg,
  kSign,
  // float32
  kLeakyRelu,        // alpha
  kElu,              // alpha
  kSelu,             // alpha, gamma
  kCelu,             // alpha
  kThresholdedRelu,  // alpha
  kHardSigmoid,      // alpha, beta
  kHardSwish,
  kSoftplus,
  kSoftsign,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kErf,
  kFloor,
  kCeil,
  kRound,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kClip,       // lo if has_lo, hi if has_hi
  kGelu,       // erf form
  kGeluTanh,   // tanh approximation (FastGelu)
  kQuickGelu,  // x * sigmoid(alpha * x)
  // float32 -> bool
  kIsNaN,
  kIsInf,  // detect_negative = has_lo, detect_positive = has_hi
  // bool -> bool
  kNot,
};

struct UnaryParams {
  float alpha = 0;
  float beta = 0;
  float gamma = 0;
  float lo = 0;
  float hi = 0;
  bool has_lo = false;
  bool has_hi = false;
  // Clip bounds computed at run time: read on the device (one element each, of type bound_type)
  // instead of lo / hi.
  const void* lo_ptr = nullptr;
  const void* hi_ptr = nullptr;
  ElemType bound_type = ElemType::kFloat;
};

// y = op(x) for n elements; x and y may be the same buffer. Every float op also takes float16 and
// bfloat16 (computed in float, rounded once); IsNaN / IsInf read them too.
cudaError_t launch_unary(UnaryOp op, ElemType type, const void* x, void* y, int64_t n,
                         const UnaryParams& params, cudaStream_t stream);

// y[i] = op(x[i] + bias[i % bias_n]) for n elements of float type `type` (float32, float16,
// bfloat16; the half types computed in float), the bias one row of the trailing dims.
cudaError_t launch_bias_unary(UnaryOp op, ElemType type, const void* x, const void* bias, void* y,
                              int64_t n, int64_t bias_n, const UnaryParams& params,
                              cudaStream_t stream);

}  // namespace xopt::cuda
