// One row-major matrix product through cuBLASLt (float32, float16 or bfloat16 operands, always
// accumulated in fp32: CUBLAS_COMPUTE_32F, float alpha/beta), planned at compile time and replayed:
//
//   Y[i] (m x n, row stride y_ld) = act(alpha * A'[i] (m x k) * B'[i] (k x n) + beta * Y[i] + bias)
//
// for i < batch, with every operand given by element strides (so transposes, FusedMatMul's
// transBatch and broadcast batches, stride 0, need no copies). cuBLAS is column-major: Y^T =
// B'^T A'^T, so cuBLASLt's "A" is B' and its "B" is A'. Shared by gemm.cc and attention.cc.
#pragma once

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"

namespace xopt::cuda {

struct LtGemmSpec {
  int64_t m = 0, n = 0, k = 0;
  int64_t a_rs = 0, a_cs = 1;                       // A' (m x k) row / column strides, elements
  int64_t b_rs = 0, b_cs = 1;                       // B' (k x n)
  int64_t y_ld = 0;                                 // Y's row stride (>= n)
  int64_t batch = 1, a_bs = 0, b_bs = 0, y_bs = 0;  // batch count and strides, elements
  float alpha = 1.0f, beta = 0.0f;                  // beta != 0 accumulates into Y (C = D)
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // RELU / BIAS / RELU_BIAS
  const void* bias = nullptr;  // [n] for the BIAS epilogues, of the operands' type
  // Every operand's (and the bias's) type: CUDA_R_32F, CUDA_R_16F or CUDA_R_16BF.
  cudaDataType_t type = CUDA_R_32F;
};

// The cuBLASLt type of a float element type, and its size in bytes.
inline cudaDataType_t lt_type(ir::DType t) {
  return t == ir::DType::kFloat16    ? CUDA_R_16F
         : t == ir::DType::kBFloat16 ? CUDA_R_16BF
                                     : CUDA_R_32F;
}
inline size_t lt_type_size(cudaDataType_t t) {
  return t == CUDA_R_32F ? 4 : 2;
}

// The planned product: descriptors, the algorithm and its workspace.
class LtGemm {
 public:
  LtGemm() = default;
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  ~LtGemm() {
    if (pref_ != nullptr) cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {la_, lb_, ly_})
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
  }

  // Plans the product for operands at `a`, `b`, `y` (their addresses decide the alignment the
  // algorithm may assume). Workspace at most `max_workspace` bytes.
  static Result<std::shared_ptr<LtGemm>> create(const CompileContext& ctx, const LtGemmSpec& s,
                                                const void* a, const void* b, const void* y,
                                                size_t max_workspace) {
    auto g = std::make_shared<LtGemm>();
    g->spec_ = s;
    g->handle_ = ctx.handles().lt;
    // TF32 applies to fp32 operands only; half operands run the tensor cores with fp32 sums.
    const cublasComputeType_t compute = ctx.options().tf32 && s.type == CUDA_R_32F
                                            ? CUBLAS_COMPUTE_32F_FAST_TF32
                                            : CUBLAS_COMPUTE_32F;
    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&g->op_, compute, CUDA_R_32F));
    // cuBLASLt's A: B'^T (n x k); its B: A'^T (k x m); D: Y^T (n x m, ld y_ld).
    Layout la, lb;
    if (!layout(s.k, s.n, s.b_rs, s.b_cs, &la) || !layout(s.m, s.k, s.a_rs, s.a_cs, &lb))
      return ctx.unsupported("an operand's strides are not expressible for cuBLASLt");
    XOPT_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(g->op_, CUBLASLT_MATMUL_DESC_TRANSA, &la.op, sizeof(la.op)));
    XOPT_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(g->op_, CUBLASLT_MATMUL_DESC_TRANSB, &lb.op, sizeof(lb.op)));
    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
        g->op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &s.epilogue, sizeof(s.epilogue)));
    if (s.bias != nullptr)
      XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
          g->op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &s.bias, sizeof(s.bias)));
    XOPT_RETURN_IF_ERROR(make_layout(la, s.type, s.batch, s.b_bs, &g->la_));
    XOPT_RETURN_IF_ERROR(make_layout(lb, s.type, s.batch, s.a_bs, &g->lb_));
    XOPT_RETURN_IF_ERROR(
        make_layout({CUBLAS_OP_N, s.n, s.m, s.y_ld}, s.type, s.batch, s.y_bs, &g->ly_));

    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&g->pref_));
    const uint64_t max_ws = max_workspace;
    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(
        g->pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
    // The alignment every batch's pointer really has (the heuristics otherwise assume 256).
    const bool batched = s.batch > 1;
    const size_t es = lt_type_size(s.type);
    const uint32_t al_a = alignment(b, batched ? s.b_bs : 0, es);
    const uint32_t al_b = alignment(a, batched ? s.a_bs : 0, es);
    const uint32_t al_y = alignment(y, batched ? s.y_bs : 0, es);
    for (auto [attr, v] : {std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, al_a},
                           std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, al_b},
                           std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al_y},
                           std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al_y}})
      XOPT_CUBLAS_RETURN_IF_ERROR(
          cublasLtMatmulPreferenceSetAttribute(g->pref_, attr, &v, sizeof(v)));
    cublasLtMatmulHeuristicResult_t results[8] = {};
    int returned = 0;
    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulAlgoGetHeuristic(
        g->handle_, g->op_, g->la_, g->lb_, g->ly_, g->ly_, g->pref_, 8, results, &returned));
    for (int i = 0; i < returned; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= max_workspace) {
        g->algo_ = results[i].algo;
        g->workspace_ = results[i].workspaceSize;
        return g;
      }
    return ctx.unsupported("cuBLASLt has no algorithm for this product (m " + std::to_string(s.m) +
                           ", n " + std::to_string(s.n) + ", k " + std::to_string(s.k) +
                           ", batch " + std::to_string(s.batch) + ") within " +
                           std::to_string(max_workspace) + " bytes of workspace");
  }

  size_t workspace() const { return workspace_; }

  Status run(const void* a, const void* b, void* y, void* workspace, cudaStream_t stream) const {
    XOPT_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmul(handle_, op_, &spec_.alpha, b, la_, a, lb_, &spec_.beta, y, ly_, y, ly_,
                       &algo_, workspace_ > 0 ? workspace : nullptr, workspace_, stream));
    return Status::ok();
  }

 private:
  struct Layout {
    cublasOperation_t op;
    int64_t rows, cols, ld;  // the stored column-major matrix
  };

  // The column-major view of X^T for a row-major-logical X (r x c, strides rs, cs).
  static bool layout(int64_t r, int64_t c, int64_t rs, int64_t cs, Layout* out) {
    if (cs == 1 || c == 1) {
      *out = {CUBLAS_OP_N, c, r, r == 1 ? std::max<int64_t>(c, 1) : std::max<int64_t>(rs, 1)};
      return out->ld >= out->rows;
    }
    if (rs == 1 || r == 1) {
      *out = {CUBLAS_OP_T, r, c, c == 1 ? std::max<int64_t>(r, 1) : cs};
      return out->ld >= out->rows;
    }
    return false;
  }

  static Status make_layout(const Layout& l, cudaDataType_t type, int64_t batch,
                            int64_t batch_stride, cublasLtMatrixLayout_t* out) {
    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(out, type, static_cast<uint64_t>(l.rows),
                                                           static_cast<uint64_t>(l.cols), l.ld));
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(
          *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
      XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(
          *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride, sizeof(batch_stride)));
    }
    return Status::ok();
  }

  static uint32_t alignment(const void* p, int64_t batch_stride_elems, size_t elem_size) {
    uint64_t v =
        reinterpret_cast<uintptr_t>(p) | (static_cast<uint64_t>(batch_stride_elems) * elem_size);
    uint32_t al = 256;
    if (v != 0) al = static_cast<uint32_t>(std::min<uint64_t>(256, v & (~v + 1)));
    return std::max<uint32_t>(al, static_cast<uint32_t>(elem_size));
  }

  LtGemmSpec spec_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ly_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_ = {};
  size_t workspace_ = 0;
};

// cuBLASLt's workspace cap: the node's limit, at most 32 MiB.
inline size_t lt_workspace_cap(const CompileContext& ctx) {
  return std::min<size_t>(ctx.workspace_limit(), size_t{32} << 20);
}

}  // namespace xopt::cuda
