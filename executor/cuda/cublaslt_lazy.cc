#include "executor/cuda/cublaslt_lazy.h"

#include <cublasLt.h>

#include <string>

#include "executor/cuda/dynamic_library.h"

namespace xopt::cuda {
namespace {

#define XOPT_STR2(x) #x
#define XOPT_STR(x) XOPT_STR2(x)
constexpr const char* kLibrary = "libcublasLt.so." XOPT_STR(CUBLAS_VER_MAJOR);

const DynamicLibrary& library() {
  static const DynamicLibrary lib(kLibrary);
  return lib;
}

template <typename F>
F* symbol(const char* name) {
  F* f = nullptr;
  library().find(name, &f);
  return f;
}

}  // namespace

Status load_cublaslt() {
  const DynamicLibrary& l = library();
  if (l.is_open()) return Status::ok();
  return internal_error(std::string("cuBLASLt (") + kLibrary + ") cannot be loaded: " + l.error());
}

}  // namespace xopt::cuda

// Each forwarder resolves its function once; without the library it reports the handle as not
// initialized (load_cublaslt() says why).
#define XOPT_FORWARD(name, params, args)                                \
  extern "C" cublasStatus_t CUBLASWINAPI name params {                  \
    static auto* const f = ::xopt::cuda::symbol<decltype(name)>(#name); \
    return f != nullptr ? f args : CUBLAS_STATUS_NOT_INITIALIZED;       \
  }

XOPT_FORWARD(cublasLtCreate, (cublasLtHandle_t * h), (h))
XOPT_FORWARD(cublasLtDestroy, (cublasLtHandle_t h), (h))
XOPT_FORWARD(cublasLtMatmul,
             (cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void* alpha, const void* a,
              cublasLtMatrixLayout_t a_desc, const void* b, cublasLtMatrixLayout_t b_desc,
              const void* beta, const void* c, cublasLtMatrixLayout_t c_desc, void* d,
              cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo, void* workspace,
              size_t workspace_bytes, cudaStream_t stream),
             (h, desc, alpha, a, a_desc, b, b_desc, beta, c, c_desc, d, d_desc, algo, workspace,
              workspace_bytes, stream))
XOPT_FORWARD(cublasLtMatmulDescCreate,
             (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute, cudaDataType_t scale),
             (desc, compute, scale))
XOPT_FORWARD(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
XOPT_FORWARD(cublasLtMatmulDescSetAttribute,
             (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf,
              size_t size),
             (desc, attr, buf, size))
XOPT_FORWARD(cublasLtMatrixLayoutCreate,
             (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows, uint64_t cols,
              int64_t ld),
             (layout, type, rows, cols, ld))
XOPT_FORWARD(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
XOPT_FORWARD(cublasLtMatrixLayoutSetAttribute,
             (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const void* buf,
              size_t size),
             (layout, attr, buf, size))
XOPT_FORWARD(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * pref), (pref))
XOPT_FORWARD(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref))
XOPT_FORWARD(cublasLtMatmulPreferenceSetAttribute,
             (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
              const void* buf, size_t size),
             (pref, attr, buf, size))
XOPT_FORWARD(cublasLtMatmulAlgoGetHeuristic,
             (cublasLtHandle_t h, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
              cublasLtMatmulPreference_t pref, int requested,
              cublasLtMatmulHeuristicResult_t results[], int* returned),
             (h, desc, a, b, c, d, pref, requested, results, returned))
