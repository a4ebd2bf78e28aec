#include "executor/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "executor/cpu/dispatch.h"
#include "executor/cpu/parallel.h"

namespace xopt::exec {

namespace {

// OpenBLAS runs single-threaded: the products are split across the intra-op pool instead, so that
// kernels calling gemm from inside a parallel_for do not oversubscribe the cores.
void blas_serial_once() {
  static const bool done = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

// Products smaller than this many multiply-adds run on one thread.
constexpr int64_t kParallelMacs = int64_t{1} << 17;

// C = alpha * op(A) * op(B) + beta * C, split into row blocks (along M) or column blocks (along N)
// over the intra-op threads; `blas` computes one block. Every element of C is computed by one call
// over the whole K, so the split changes no sum. Each block packs its own copy of the operand it
// shares with the others, so the split goes along M when B is the smaller operand, else along N.
template <typename T, typename Blas>
void split_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
                int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, Blas&& blas) {
  blas_serial_once();
  constexpr int64_t kRowUnit = 8, kColUnit = 16;
  const int64_t row_units = (m + kRowUnit - 1) / kRowUnit;
  const int64_t col_units = (n + kColUnit - 1) / kColUnit;
  const bool parallel = intra_op_threads() > 1 && m * n * k >= kParallelMacs;
  const bool by_rows = n < m ? row_units > 1 : col_units <= 1;
  if (!parallel || (by_rows ? row_units : col_units) <= 1) {
    blas(m, n, a, b, c);
    return;
  }
  if (by_rows) {
    parallel_for(row_units, 1, [&](int64_t lo, int64_t hi) {
      const int64_t i0 = lo * kRowUnit, i1 = std::min(m, hi * kRowUnit);
      blas(i1 - i0, n, trans_a ? a + i0 : a + i0 * lda, b, c + i0 * ldc);
    });
  } else {
    parallel_for(col_units, 1, [&](int64_t lo, int64_t hi) {
      const int64_t j0 = lo * kColUnit, j1 = std::min(n, hi * kColUnit);
      blas(m, j1 - j0, a, trans_b ? b + j0 * ldb : b + j0, c + j0);
    });
  }
}

// C = alpha * op(A) op(B) + beta * C through OpenBLAS, split across the intra-op pool.
template <typename T>
void blas_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  const auto ta = trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = trans_b ? CblasTrans : CblasNoTrans;
  split_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc,
             [&](int64_t mm, int64_t nn, const T* aa, const T* bb, T* cc) {
               const auto bi = [](int64_t v) { return static_cast<blasint>(v); };
               if constexpr (std::is_same_v<T, float>)
                 cblas_sgemm(CblasRowMajor, ta, tb, bi(mm), bi(nn), bi(k), alpha, aa, bi(lda), bb,
                             bi(ldb), beta, cc, bi(ldc));
               else
                 cblas_dgemm(CblasRowMajor, ta, tb, bi(mm), bi(nn), bi(k), alpha, aa, bi(lda), bb,
                             bi(ldb), beta, cc, bi(ldc));
             });
}

}  // namespace

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  blas_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
           const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
           int64_t ldc) {
  blas_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

namespace {

// Elements spanned by a row-major matrix of `rows` rows of `cols` used columns with row stride
// `ld`.
int64_t span(int64_t rows, int64_t cols, int64_t ld) {
  return rows <= 0 ? 0 : (rows - 1) * ld + cols;
}

template <typename T>
std::vector<float> widen(const T* p, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(to_compute(p[i]));
  return out;
}

template <typename T>
void integer_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                  const T* a, int64_t lda, const T* b, int64_t ldb, double beta, T* c,
                  int64_t ldc) {
  // Unsigned arithmetic wraps like the two's-complement hardware the other runtimes use, without
  // signed-overflow undefined behaviour.
  using U = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;
  std::vector<U> acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), U{0});
    for (int64_t p = 0; p < k; ++p) {
      const U av = static_cast<U>(trans_a ? a[p * lda + i] : a[i * lda + p]);
      if (av == 0) continue;
      if (trans_b) {
        for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<U>(b[j * ldb + p]);
      } else {
        const T* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<U>(brow[j]);
      }
    }
    T* crow = c + i * ldc;
    if (alpha == 1.0 && beta == 0.0) {
      for (int64_t j = 0; j < n; ++j) crow[j] = static_cast<T>(acc[j]);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const double v = alpha * static_cast<double>(static_cast<T>(acc[j])) +
                         (beta == 0.0 ? 0.0 : beta * static_cast<double>(crow[j]));
        crow[j] = static_cast<T>(v);
      }
    }
  }
}

}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(trans_a, trans_b, m, n, k, static_cast<float>(alpha), a, lda, b, ldb,
          static_cast<float>(beta), c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, ir::Float16> || std::is_same_v<T, ir::BFloat16>) {
    if (m <= 0 || n <= 0) return;
    const std::vector<float> fa = widen(a, span(trans_a ? k : m, trans_a ? m : k, lda));
    const std::vector<float> fb = widen(b, span(trans_b ? n : k, trans_b ? k : n, ldb));
    std::vector<float> fc(static_cast<size_t>(m * n), 0.0f);
    if (beta != 0.0)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) fc[i * n + j] = to_compute(c[i * ldc + j]);
    sgemm(trans_a, trans_b, m, n, k, static_cast<float>(alpha), fa.data(), lda, fb.data(), ldb,
          static_cast<float>(beta), fc.data(), n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = from_compute<T>(fc[i * n + j]);
  } else {
    static_assert(std::is_integral_v<T>, "gemm: unsupported element type");
    integer_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

#define XOPT_INSTANTIATE_GEMM(T)                                                          \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, double, const T*, int64_t, \
                        const T*, int64_t, double, T*, int64_t)
XOPT_INSTANTIATE_GEMM(float);
XOPT_INSTANTIATE_GEMM(double);
XOPT_INSTANTIATE_GEMM(ir::Float16);
XOPT_INSTANTIATE_GEMM(ir::BFloat16);
XOPT_INSTANTIATE_GEMM(int8_t);
XOPT_INSTANTIATE_GEMM(int16_t);
XOPT_INSTANTIATE_GEMM(int32_t);
XOPT_INSTANTIATE_GEMM(int64_t);
XOPT_INSTANTIATE_GEMM(uint8_t);
XOPT_INSTANTIATE_GEMM(uint16_t);
XOPT_INSTANTIATE_GEMM(uint32_t);
XOPT_INSTANTIATE_GEMM(uint64_t);
#undef XOPT_INSTANTIATE_GEMM

}  // namespace xopt::exec
