// Reductions over any set of axes (ReduceSum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum,
// LogSumExp) and ArgMax / ArgMin along one axis, float32, float16 or bfloat16. Sums accumulate in
// double like the CPU reference (executor/cpu/kernels/reduce.cc); Max/Min propagate NaN.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/kernels/launch_params.h"

namespace xopt::cuda {

enum class ReduceOp : int {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kSumSquare,
  kLogSum,
  kLogSumExp,
};

// Output o (row-major over the kept dims) reduces `count` input elements: its base offset is o
// decomposed over kept_dims times kept_strides; the reduced elements are at base + k decomposed
// over red_dims times red_strides. `rows`: the reduced elements of o are exactly
// [o * count, (o + 1) * count) (a trailing reduction), which runs one warp or block per output.
struct ReducePlan {
  int64_t n_out = 0;
  int64_t count = 0;
  bool rows = false;
  int kept_rank = 0;
  int red_rank = 0;
  int64_t kept_dims[kMaxDims] = {};
  int64_t kept_strides[kMaxDims] = {};
  int64_t red_dims[kMaxDims] = {};
  int64_t red_strides[kMaxDims] = {};
};

// x and y of float type `t` (float32, float16, bfloat16; sums in double, extremes in float).
cudaError_t launch_reduce(ReduceOp op, ElemType t, const void* x, void* y, const ReducePlan& plan,
                          cudaStream_t stream);

// y[o, i] = index along n of the max (min) of x[o, :, i]; the first one, or the last with
// select_last. NaN counts as the extreme.
cudaError_t launch_arg_extreme(ElemType t, const void* x, int64_t* y, int64_t outer, int64_t n,
                               int64_t inner, bool is_max, bool select_last, cudaStream_t stream);

}  // namespace xopt::cuda
