// Gemm and MatMul, shared with com.microsoft FusedGemm and FusedMatMul.
#pragma once

#include "executor/cpu/kernel.h"
#include "executor/cpu/kernels/nn_util.h"

namespace xopt::exec::nn {

// Gemm with the node's attributes (transA, transB, alpha, beta) on A (0), B (1), optional C (2),
// followed by `act`.
Status run_gemm(KernelContext& ctx, const Activation& act);

struct MatMulOptions {
  bool trans_a = false, trans_b = false;  // swap the last two dims
  // Move the first dim to just before the last two (com.microsoft FusedMatMul transBatchA/B):
  // [d0, d1, ..., dk, m, n] is read as [d1, ..., dk, d0, m, n] before trans_*.
  bool trans_batch_a = false, trans_batch_b = false;
  double alpha = 1.0;
};

// numpy-style matmul (1-D operands promoted, batch dims broadcast) of inputs 0 and 1 into output 0.
Status run_matmul(KernelContext& ctx, const MatMulOptions& opt);

}  // namespace xopt::exec::nn
