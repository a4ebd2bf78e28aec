// Gemm, com.microsoft FusedGemm, MatMul and com.microsoft FusedMatMul through cuBLASLt: float32,
// float16 or bfloat16 operands (one type per node), always accumulated in fp32.
//
// Gemm(A, B, C?) = act(alpha * A' B' + beta * C): a C of [N] or [1, N] with beta = 1 is
// cuBLASLt's bias epilogue; any other C is broadcast into Y first and accumulated with beta. Relu
// is the RELU(_BIAS) epilogue; FusedGemm's other activations run as one epilogue kernel after the
// product. MatMul has numpy semantics (1-D operands promoted, batch dims broadcast): batches that
// share B and stack A become one product with M = batch * m; otherwise the broadcast batch dims
// that collapse to one stride per operand are one strided-batched call, and any remaining outer
// batch dims are a short list of such calls. FusedMatMul adds alpha, transA/transB and
// transBatchA/transBatchB, all expressed as strides.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/kernels/conv_epilogue.cuh"
#include "executor/cuda/kernels/conv_util.h"
#include "executor/cuda/kernels/gemm_lt.h"

namespace xopt::cuda {
namespace {

Status run_activation(ElemType t, void* y, int64_t n, const ActParams& act, cudaStream_t stream) {
  if (act.kind == ActKind::kIdentity) return Status::ok();
  return check_launch(launch_bias_act(t, y, nullptr, nullptr, n, 1, 1, act, stream));
}

// Gemm with the node's transA, transB, alpha, beta and `act`.
Result<Launch> compile_gemm(CompileContext& ctx, ActParams act) {
  const DeviceTensor* ap = ctx.input(0);
  const DeviceTensor* bp = ctx.input(1);
  if (ap == nullptr || bp == nullptr) return ctx.error("A and B are required");
  XOPT_ASSIGN_OR_RETURN(const ir::DType dt, require_float(ctx, {0, 1, 2}));
  const ElemType et = elem_of(dt);
  const DeviceTensor& a = *ap;
  const DeviceTensor& b = *bp;
  const DeviceTensor* c = ctx.input(2);
  const ir::Node& node = ctx.node();
  if (a.rank() != 2 || b.rank() != 2)
    return ctx.error("A and B must be 2-D, got " + ir::dims_string(a.dims) + " and " +
                     ir::dims_string(b.dims));
  const bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  const float alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  const int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
  const int64_t n = tb ? b.dims[0] : b.dims[1], kb = tb ? b.dims[1] : b.dims[0];
  if (k != kb)
    return ctx.error("inner dimensions differ: A " + ir::dims_string(a.dims) + " and B " +
                     ir::dims_string(b.dims));
  XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 0, {m, n}));
  const DeviceTensor& y = *ctx.output(0);
  if (m * n == 0) return Launch([](const LaunchEnv&) { return Status::ok(); });
  if (k == 0) return ctx.unsupported("Gemm with an empty inner dimension");

  LtGemmSpec s;
  s.m = m, s.n = n, s.k = k;
  // A stored [a0, a1] row-major: A' = A or A^T as strides.
  s.a_rs = ta ? 1 : a.dims[1];
  s.a_cs = ta ? a.dims[1] : 1;
  s.b_rs = tb ? 1 : b.dims[1];
  s.b_cs = tb ? b.dims[1] : 1;
  s.y_ld = n;
  s.alpha = alpha;
  s.type = lt_type(dt);
  const bool use_c = c != nullptr && beta != 0.0f;
  // C as [c_rows, c_cols] broadcast to [m, n].
  int64_t c_rows = 1, c_cols = 1;
  if (use_c) {
    const auto& cd = c->dims;
    if (cd.size() > 2) return ctx.error("C " + ir::dims_string(cd) + " has rank above 2");
    if (cd.size() == 2) c_rows = cd[0], c_cols = cd[1];
    if (cd.size() == 1) c_cols = cd[0];
    if ((c_rows != 1 && c_rows != m) || (c_cols != 1 && c_cols != n))
      return ctx.error("C " + ir::dims_string(cd) + " does not broadcast to [" + std::to_string(m) +
                       ", " + std::to_string(n) + "]");
  }
  const bool relu = act.kind == ActKind::kRelu;
  const bool bias_epilogue = use_c && beta == 1.0f && c_rows == 1 && c_cols == n;
  const void* cdp = use_c ? c->data : nullptr;
  if (bias_epilogue) {
    s.epilogue = relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    s.bias = cdp;
  } else {
    s.epilogue = relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
    s.beta = use_c ? beta : 0.0f;
  }
  const ActParams after = relu ? ActParams{} : act;
  XOPT_ASSIGN_OR_RETURN(std::shared_ptr<LtGemm> g,
                        LtGemm::create(ctx, s, a.data, b.data, y.data, lt_workspace_cap(ctx)));
  ctx.request_workspace(g->workspace());
  // Broadcast C into Y unless it is already there (Y planned in place of a full-size C).
  const bool copy_c = use_c && !bias_epilogue && !(cdp == y.data && c_rows == m && c_cols == n);
  const void* ad = a.data;
  const void* bd = b.data;
  void* yd = y.data;
  return Launch([g, et, ad, bd, yd, cdp, copy_c, c_rows, c_cols, m, n,
                 after](const LaunchEnv& env) -> Status {
    if (copy_c)
      XOPT_RETURN_IF_ERROR(
          check_launch(launch_broadcast_2d(et, cdp, yd, m, n, c_rows, c_cols, env.stream)));
    XOPT_RETURN_IF_ERROR(g->run(ad, bd, yd, env.workspace, env.stream));
    return run_activation(et, yd, m * n, after, env.stream);
  });
}

Result<Launch> gemm(CompileContext& ctx) {
  return compile_gemm(ctx, ActParams{});
}

Result<Launch> fused_gemm(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(ActParams act, read_gemm_activation(ctx));
  return compile_gemm(ctx, act);
}

// One operand of a batched matmul: logical dims [batch..., rows, cols] with element strides (the
// CPU reference's make_operand, executor/cpu/kernels/nn_gemm.cc).
struct Operand {
  std::vector<int64_t> dims, strides;
  size_t rank() const { return dims.size(); }
  int64_t rows() const { return dims[rank() - 2]; }
  int64_t cols() const { return dims[rank() - 1]; }
  int64_t rs() const { return strides[rank() - 2]; }
  int64_t cs() const { return strides[rank() - 1]; }
};

Operand make_operand(const std::vector<int64_t>& dims, bool is_b, bool trans_batch, bool trans) {
  Operand o;
  o.dims = dims;
  o.strides.assign(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) o.strides[i - 1] = o.strides[i] * dims[i];
  if (o.dims.size() == 1) {  // [K] -> [1, K] for A, [K, 1] for B
    if (is_b) {
      o.dims = {dims[0], 1};
      o.strides = {1, 1};
    } else {
      o.dims = {1, dims[0]};
      o.strides = {dims[0], 1};
    }
    return o;
  }
  const size_t r = o.dims.size();
  if (trans_batch && r >= 3) {  // move dim 0 to position r-2
    std::vector<int64_t> d, s;
    for (size_t i = 1; i + 1 < r; ++i) d.push_back(o.dims[i]), s.push_back(o.strides[i]);
    d.push_back(o.dims[0]), s.push_back(o.strides[0]);
    d.push_back(o.dims[r - 1]), s.push_back(o.strides[r - 1]);
    o.dims = d;
    o.strides = s;
  }
  if (trans) {
    std::swap(o.dims[r - 2], o.dims[r - 1]);
    std::swap(o.strides[r - 2], o.strides[r - 1]);
  }
  return o;
}

struct MatMulOptions {
  bool trans_a = false, trans_b = false, trans_batch_a = false, trans_batch_b = false;
  float alpha = 1.0f;
};

Result<Launch> compile_matmul(CompileContext& ctx, const MatMulOptions& opt) {
  const DeviceTensor* ap = ctx.input(0);
  const DeviceTensor* bp = ctx.input(1);
  if (ap == nullptr || bp == nullptr) return ctx.error("A and B are required");
  XOPT_ASSIGN_OR_RETURN(const ir::DType dt, require_float(ctx, {0, 1}));
  const size_t es = ir::dtype_size(dt);
  const DeviceTensor& a = *ap;
  const DeviceTensor& b = *bp;
  if (a.rank() == 0 || b.rank() == 0) return ctx.error("MatMul operands must have rank >= 1");
  const Operand oa = make_operand(a.dims, false, opt.trans_batch_a, opt.trans_a);
  const Operand ob = make_operand(b.dims, true, opt.trans_batch_b, opt.trans_b);
  const int64_t m = oa.rows(), k = oa.cols(), n = ob.cols();
  if (ob.rows() != k)
    return ctx.error("inner dimensions differ: A " + ir::dims_string(a.dims) + " and B " +
                     ir::dims_string(b.dims));
  // Broadcast batch dims and each operand's stride along them (0 where broadcast).
  const std::vector<int64_t> a_batch(oa.dims.begin(), oa.dims.end() - 2);
  const std::vector<int64_t> b_batch(ob.dims.begin(), ob.dims.end() - 2);
  const size_t br = std::max(a_batch.size(), b_batch.size());
  std::vector<int64_t> batch(br, 1), sa(br, 0), sb(br, 0), sy(br, 0);
  for (size_t i = 0; i < br; ++i) {
    const size_t ia = i + a_batch.size(), ib = i + b_batch.size();  // offset by br
    const int64_t da = ia >= br ? a_batch[ia - br] : 1, db = ib >= br ? b_batch[ib - br] : 1;
    if (da != db && da != 1 && db != 1)
      return ctx.error("batch dims of A " + ir::dims_string(a.dims) + " and B " +
                       ir::dims_string(b.dims) + " do not broadcast");
    batch[i] = std::max(da, db);
    if (da != 1) sa[i] = oa.strides[ia - br];
    if (db != 1) sb[i] = ob.strides[ib - br];
  }
  std::vector<int64_t> y_dims = batch;
  if (a.rank() > 1) y_dims.push_back(m);
  if (b.rank() > 1) y_dims.push_back(n);
  XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 0, y_dims));
  const DeviceTensor& y = *ctx.output(0);
  if (y.numel() == 0) return Launch([](const LaunchEnv&) { return Status::ok(); });
  void* yd = y.data;
  if (k == 0) {  // an empty sum: zeros
    const size_t bytes = y.nbytes();
    return Launch([yd, bytes](const LaunchEnv& env) -> Status {
      XOPT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(yd, 0, bytes, env.stream));
      return Status::ok();
    });
  }
  for (size_t i = br, stride = static_cast<size_t>(m * n); i-- > 0;) {
    sy[i] = static_cast<int64_t>(stride);
    stride *= static_cast<size_t>(batch[i]);
  }
  // The innermost batch dims that collapse to one stride per operand become the strided batch;
  // dims of size 1 are skipped.
  int64_t inner = 1, ia_s = 0, ib_s = 0, iy_s = 0;
  size_t first_inner = br;
  for (size_t i = br; i-- > 0;) {
    if (batch[i] == 1) {
      first_inner = i;
      continue;
    }
    if (inner == 1) {
      inner = batch[i], ia_s = sa[i], ib_s = sb[i], iy_s = sy[i];
    } else if (sa[i] == ia_s * inner && sb[i] == ib_s * inner && sy[i] == iy_s * inner) {
      inner *= batch[i];
    } else {
      break;
    }
    first_inner = i;
  }
  // Outer batch dims: one call each, at offsets fixed now.
  std::vector<int64_t> off_a{0}, off_b{0}, off_y{0};
  for (size_t i = 0; i < first_inner; ++i) {
    std::vector<int64_t> na, nb, ny;
    for (size_t j = 0; j < off_a.size(); ++j)
      for (int64_t t = 0; t < batch[i]; ++t) {
        na.push_back(off_a[j] + t * sa[i]);
        nb.push_back(off_b[j] + t * sb[i]);
        ny.push_back(off_y[j] + t * sy[i]);
      }
    off_a.swap(na), off_b.swap(nb), off_y.swap(ny);
  }
  LtGemmSpec s;
  s.m = m, s.n = n, s.k = k;
  s.a_rs = oa.rs(), s.a_cs = oa.cs(), s.b_rs = ob.rs(), s.b_cs = ob.cs();
  s.y_ld = n;
  s.alpha = opt.alpha;
  s.type = lt_type(dt);
  s.batch = inner, s.a_bs = ia_s, s.b_bs = ib_s, s.y_bs = iy_s;
  // B shared by every batch and A's batches stacked rows: one product with M = batch * m.
  if (off_a.size() == 1 && inner > 1 && ib_s == 0 && oa.cs() == 1 && (m == 1 || oa.rs() == k) &&
      ia_s == m * k && iy_s == m * n) {
    s.m = m * inner;
    s.a_rs = k;
    s.batch = 1, s.a_bs = s.b_bs = s.y_bs = 0;
  }
  // The alignment the algorithm may assume covers every call's offset.
  auto with_offsets = [es](const void* p, const std::vector<int64_t>& offs) {
    uintptr_t v = reinterpret_cast<uintptr_t>(p);
    for (int64_t o : offs) v |= static_cast<uintptr_t>(o) * es;
    return reinterpret_cast<const void*>(v);
  };
  XOPT_ASSIGN_OR_RETURN(
      std::shared_ptr<LtGemm> g,
      LtGemm::create(ctx, s, with_offsets(a.data, off_a), with_offsets(b.data, off_b),
                     with_offsets(y.data, off_y), lt_workspace_cap(ctx)));
  ctx.request_workspace(g->workspace());
  // Offsets in bytes of the operands' type.
  const char* ad = static_cast<const char*>(a.data);
  const char* bd = static_cast<const char*>(b.data);
  char* yc = static_cast<char*>(yd);
  const auto bytes = [es](std::vector<int64_t> v) {
    for (int64_t& o : v) o *= static_cast<int64_t>(es);
    return v;
  };
  return Launch([g, ad, bd, yc, ob_a = bytes(off_a), ob_b = bytes(off_b),
                 ob_y = bytes(off_y)](const LaunchEnv& env) -> Status {
    for (size_t i = 0; i < ob_a.size(); ++i)
      XOPT_RETURN_IF_ERROR(
          g->run(ad + ob_a[i], bd + ob_b[i], yc + ob_y[i], env.workspace, env.stream));
    return Status::ok();
  });
}

Result<Launch> matmul(CompileContext& ctx) {
  return compile_matmul(ctx, MatMulOptions{});
}

// FusedMatMul(A, B) = alpha * matmul(A', B') with transA/transB on the last two dims and
// transBatchA/transBatchB moving the first dim next to them.
Result<Launch> fused_matmul(CompileContext& ctx) {
  const ir::Node& node = ctx.node();
  MatMulOptions opt;
  opt.trans_a = node.attr_int("transA", 0) != 0;
  opt.trans_b = node.attr_int("transB", 0) != 0;
  opt.trans_batch_a = node.attr_int("transBatchA", 0) != 0;
  opt.trans_batch_b = node.attr_int("transBatchB", 0) != 0;
  opt.alpha = node.attr_float("alpha", 1.0f);
  if ((opt.trans_a || opt.trans_batch_a) && ctx.input(0) != nullptr && ctx.input(0)->rank() == 1)
    return ctx.error("transA/transBatchA need A of rank >= 2");
  if ((opt.trans_b || opt.trans_batch_b) && ctx.input(1) != nullptr && ctx.input(1)->rank() == 1)
    return ctx.error("transB/transBatchB need B of rank >= 2");
  return compile_matmul(ctx, opt);
}

}  // namespace

// Registered up to the newest opset the CPU reference is checked against (nn_util.h kLatestOpset).
constexpr const char* kTypes = "float32, float16, bfloat16 (fp32 accumulation)";
XOPT_CUDA_KERNEL_TYPES("", "Gemm", 1, 28, gemm, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "MatMul", 1, 28, matmul, kTypes);
XOPT_CUDA_KERNEL_TYPES("com.microsoft", "FusedGemm", 1, 1, fused_gemm, kTypes);
XOPT_CUDA_KERNEL_TYPES("com.microsoft", "FusedMatMul", 1, 1, fused_matmul, kTypes);

}  // namespace xopt::cuda
