// Gemm and MatMul (numpy semantics, any numeric type) over the BLAS wrapper in executor/cpu/gemm.h.
#include "executor/cpu/kernels/nn_gemm.h"

#include <vector>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/gemm.h"
#include "executor/cpu/parallel.h"

namespace xopt::exec::nn {
namespace {

template <typename T>
void apply_activation(const Activation& act, T* p, int64_t n) {
  if (act.kind == Activation::kIdentity) return;
  if constexpr (std::is_floating_point_v<compute_t<T>>) {
    for (int64_t i = 0; i < n; ++i) p[i] = from_compute<T>(act.apply(to_compute(p[i])));
  }
}

// One operand of a batched matmul: logical dims [batch..., rows, cols] with element strides.
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

// How BLAS reads a [rows, cols] matrix with strides (rs, cs): transposed or not, and its ld.
// False when neither stride is 1 (never produced by make_operand).
bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool* trans, int64_t* ld) {
  if (cs == 1 || cols == 1) {
    *trans = false;
    *ld = rows == 1 ? std::max<int64_t>(cols, 1) : std::max<int64_t>(rs, 1);
    return true;
  }
  if (rs == 1 || rows == 1) {
    *trans = true;
    *ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    return true;
  }
  return false;
}

}  // namespace

Status run_matmul(KernelContext& ctx, const MatMulOptions& opt) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1}));
  const ir::Tensor& a = *ctx.input(0);
  const ir::Tensor& b = *ctx.input(1);
  if (a.dtype() != b.dtype())
    return ctx.error("A is " + std::string(ir::dtype_name(a.dtype())) + " but B is " +
                     std::string(ir::dtype_name(b.dtype())));
  if (a.rank() == 0 || b.rank() == 0) return ctx.error("MatMul operands must have rank >= 1");
  const Operand oa = make_operand(a.dims(), false, opt.trans_batch_a, opt.trans_a);
  const Operand ob = make_operand(b.dims(), true, opt.trans_batch_b, opt.trans_b);
  const int64_t m = oa.rows(), k = oa.cols(), n = ob.cols();
  if (ob.rows() != k)
    return ctx.error("inner dimensions differ: A " + ir::dims_string(a.dims()) + " and B " +
                     ir::dims_string(b.dims()) + " (K " + std::to_string(k) + " vs " +
                     std::to_string(ob.rows()) + ")");
  const std::vector<int64_t> a_batch(oa.dims.begin(), oa.dims.end() - 2);
  const std::vector<int64_t> b_batch(ob.dims.begin(), ob.dims.end() - 2);
  auto batch = broadcast_shapes({a_batch, b_batch});
  if (!batch.is_ok()) return batch.status().with_context(ctx.node().describe() + ": batch dims: ");
  std::vector<int64_t> y_dims = *batch;
  if (a.rank() > 1) y_dims.push_back(m);
  if (b.rank() > 1) y_dims.push_back(n);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, a.dtype(), y_dims));
  if (y->numel() == 0) return Status::ok();
  // Batch strides of each operand along the broadcast batch dims (0 where broadcast).
  const size_t br = batch->size();
  std::vector<int64_t> sa(br, 0), sb(br, 0);
  for (size_t i = 0; i < a_batch.size(); ++i)
    if (a_batch[i] != 1) sa[br - a_batch.size() + i] = oa.strides[i];
  for (size_t i = 0; i < b_batch.size(); ++i)
    if (b_batch[i] != 1) sb[br - b_batch.size() + i] = ob.strides[i];
  const int64_t nbatch = product(*batch);
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  if (!blas_layout(m, k, oa.rs(), oa.cs(), &ta, &lda) ||
      !blas_layout(k, n, ob.rs(), ob.cs(), &tb, &ldb))
    return ctx.error("internal: operand layout not expressible for BLAS");
  // When B is shared by every batch and A's batches are contiguous row-major rows, one GEMM with
  // M = batch * m does it all.
  bool b_shared = true, a_stacked = !ta && (m == 1 || oa.rs() == k);
  for (size_t i = 0; i < br; ++i) b_shared = b_shared && sb[i] == 0;
  if (a_stacked) {
    int64_t expect = m * k;
    for (size_t i = br; i-- > 0;) {
      a_stacked = a_stacked && sa[i] == expect;
      expect *= (*batch)[i];
    }
  }
  return dispatch_numeric(a.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* ad = a.data<T>();
    const T* bd = b.data<T>();
    T* yd = y->mutable_data<T>();
    if (b_shared && a_stacked) {
      gemm<T>(false, tb, nbatch * m, n, k, opt.alpha, ad, k, bd, ldb, 0.0, yd, n);
      return Status::ok();
    }
    // Batches are independent products: split them across the intra-op threads (a gemm inside a
    // chunk then runs on that chunk's thread).
    parallel_for(nbatch, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        int64_t offa = 0, offb = 0;
        for (size_t d = br, rest = static_cast<size_t>(i); d-- > 0;) {
          const auto bd_d = static_cast<size_t>((*batch)[d]);
          offa += static_cast<int64_t>(rest % bd_d) * sa[d];
          offb += static_cast<int64_t>(rest % bd_d) * sb[d];
          rest /= bd_d;
        }
        gemm<T>(ta, tb, m, n, k, opt.alpha, ad + offa, lda, bd + offb, ldb, 0.0, yd + i * m * n, n);
      }
    });
    return Status::ok();
  });
}

Status run_gemm(KernelContext& ctx, const Activation& act) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1}));
  const ir::Tensor& a = *ctx.input(0);
  const ir::Tensor& b = *ctx.input(1);
  const ir::Tensor* c = ctx.input(2);
  const ir::Node& node = ctx.node();
  if (a.rank() != 2 || b.rank() != 2)
    return ctx.error("A and B must be 2-D, got " + ir::dims_string(a.dims()) + " and " +
                     ir::dims_string(b.dims()));
  if (a.dtype() != b.dtype() || (c != nullptr && c->dtype() != a.dtype()))
    return ctx.error("A, B and C must have the same element type");
  const bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  const double alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  const int64_t m = ta ? a.dims()[1] : a.dims()[0], k = ta ? a.dims()[0] : a.dims()[1];
  const int64_t n = tb ? b.dims()[0] : b.dims()[1], kb = tb ? b.dims()[1] : b.dims()[0];
  if (k != kb)
    return ctx.error("inner dimensions differ: A " + ir::dims_string(a.dims()) + " and B " +
                     ir::dims_string(b.dims()) + " with transA=" + std::to_string(ta) +
                     " transB=" + std::to_string(tb));
  if (c != nullptr)
    XOPT_RETURN_IF_ERROR(
        broadcast_to_check(c->dims(), {m, n}).with_context(node.describe() + ": C: "));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, a.dtype(), {m, n}));
  if (act.kind != Activation::kIdentity && !ir::is_float(a.dtype()))
    return ctx.unsupported("activation on a non-float Gemm");
  return dispatch_numeric(a.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* yd = y->mutable_data<T>();
    const bool use_c = c != nullptr && beta != 0.0;
    if (use_c) {
      const T* cd = c->data<T>();
      for_each_broadcast({m, n}, {c->dims()},
                         [&](int64_t i, const int64_t* off) { yd[i] = cd[off[0]]; });
    }
    gemm<T>(ta, tb, m, n, k, alpha, a.data<T>(), a.dims()[1], b.data<T>(), b.dims()[1],
            use_c ? beta : 0.0, yd, n);
    apply_activation(act, yd, m * n);
    return Status::ok();
  });
}

namespace {

Status gemm_kernel(KernelContext& ctx) {
  return run_gemm(ctx, Activation{});
}
Status matmul_kernel(KernelContext& ctx) {
  return run_matmul(ctx, MatMulOptions{});
}

}  // namespace

XOPT_CPU_KERNEL("", "Gemm", 1, kLatestOpset, gemm_kernel);
XOPT_CPU_KERNEL("", "MatMul", 1, kLatestOpset, matmul_kernel);

}  // namespace xopt::exec::nn
