// Broadcast elementwise kernels: binary arithmetic, comparisons and logic, variadic
// Max/Min/Sum/Mean, Where and Cast. Launchers take plain pointers and an IndexPlan built at
// compile time (kernels/launch_params.h); semantics follow executor/cpu/kernels/elementwise_*.cc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

enum class BinaryOp : int {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,   // sign of the divisor (Python '%')
  kFMod,  // sign of the dividend (C fmod)
  kPow,
  kPRelu,  // a < 0 ? b * a : a
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor,
};

// y = op(a, b) over plan p (2 operands: a then b; p.numel outputs written contiguously).
// Types: arithmetic float/int32/int64 (Pow: a float, b float/int32/int64; PRelu float);
// comparisons float/int32/int64 (Equal also bool) -> bool; And/Or/Xor bool -> bool.
cudaError_t launch_binary(BinaryOp op, ElemType a_type, ElemType b_type, const void* a,
                          const void* b, void* y, const IndexPlan& p, cudaStream_t stream);

enum class VariadicOp : int { kMax, kMin, kSum, kMean };

// y = fold(inputs) over plan p (p.operands inputs, at most kMaxOperands); float/int32/int64
// (Mean: float).
struct VariadicArgs {
  const void* in[kMaxOperands] = {};
};
cudaError_t launch_variadic(VariadicOp op, ElemType type, const VariadicArgs& in, void* y,
                            const IndexPlan& p, cudaStream_t stream);

// out = cond ? x : y over plan p (operands: cond, x, y); elements of 1, 2, 4 or 8 bytes moved as
// bits.
cudaError_t launch_where(const bool* cond, const void* x, const void* y, void* out,
                         size_t elem_size, const IndexPlan& p, cudaStream_t stream);

// y = Cast(x) for n elements between float, int32, int64, bool and float16 (ElemType::kHalf),
// with the CPU executor's conversions (float -> int truncates, NaN -> 0, saturating through
// int64; anything -> bool is != 0).
cudaError_t launch_cast(ElemType from, ElemType to, const void* x, void* y, int64_t n,
                        cudaStream_t stream);

}  // namespace xopt::cuda
