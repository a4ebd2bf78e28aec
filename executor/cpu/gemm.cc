#include "executor/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "executor/cpu/dispatch.h"

namespace xopt::exec {

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
           const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
           int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
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
