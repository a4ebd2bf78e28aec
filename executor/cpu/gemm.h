// Dense matrix products for the CPU kernels: float and double go to OpenBLAS, the half types are
// widened to float first, integers use a plain loop with wrap-around arithmetic.
//
// All matrices are row-major. C = alpha * op(A) * op(B) + beta * C, where op(A) is M x K and op(B)
// is K x N; lda/ldb/ldc are the row strides of A, B and C as stored (before any transpose).
#pragma once

#include <cstdint>

#include "ir/dtype.h"

namespace xopt::exec {

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
           const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
           int64_t ldc);

// The same product for any numeric element type T (see the header comment for how each is done).
// alpha and beta are applied in double for integers, then cast back to T.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc);

}  // namespace xopt::exec
