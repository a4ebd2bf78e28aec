// com.microsoft fused ops with onnxruntime's semantics: FusedConv, FusedGemm, FusedMatMul and
// SkipLayerNormalization. MultiHeadAttention lives in nn_contrib_attention.cc.
#include <cmath>
#include <vector>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/kernels/nn_conv.h"
#include "executor/cpu/kernels/nn_gemm.h"
#include "executor/cpu/kernels/nn_util.h"

namespace xopt::exec::nn {
namespace {

constexpr const char* kMs = "com.microsoft";

// FusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z).
Status fused_conv(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Activation act, read_conv_activation(ctx));
  return run_conv(ctx, act, ctx.input(3));
}

// FusedGemm(A, B, C?): activation(alpha * A' B' + beta * C).
Status fused_gemm(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Activation act, read_gemm_activation(ctx));
  return run_gemm(ctx, act);
}

// FusedMatMul(A, B): alpha * matmul(A', B') with transA/transB on the last two dims and
// transBatchA/transBatchB moving the first dim next to them.
Status fused_matmul(KernelContext& ctx) {
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
  return run_matmul(ctx, opt);
}

// SkipLayerNormalization(input, skip, gamma, beta?, bias?) over the last dim of input ([B, S, H] or
// [T, H]); skip is input-shaped or broadcasts over the leading dims ([S, H], [1, S, H]). Outputs:
// output, mean and inv_std_var ([..., 1], float for half inputs), input + skip + bias.
Status skip_layer_norm(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 2}));
  const ir::Tensor& x = *ctx.input(0);
  const ir::Tensor& skip = *ctx.input(1);
  const ir::Tensor& gamma = *ctx.input(2);
  const ir::Tensor* beta = ctx.input(3);
  const ir::Tensor* bias = ctx.input(4);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2, got " + ir::dims_string(x.dims()));
  const int64_t h = x.dims().back();
  const int64_t rows = x.numel() / std::max<int64_t>(h, 1);
  // skip: input's shape, or its trailing dims with ones in front.
  bool skip_ok = skip.rank() <= x.rank() && skip.numel() > 0 && x.numel() % skip.numel() == 0;
  for (size_t i = 0; skip_ok && i < skip.rank(); ++i) {
    const int64_t sd = skip.dims()[skip.rank() - 1 - i], xd = x.dims()[x.rank() - 1 - i];
    skip_ok = sd == xd || (sd == 1 && product(skip.dims(), 0, skip.rank() - i) == 1);
  }
  if (!skip_ok)
    return ctx.error("skip " + ir::dims_string(skip.dims()) + " does not fit input " +
                     ir::dims_string(x.dims()));
  for (const ir::Tensor* t : {&gamma, beta, bias})
    if (t != nullptr && t->numel() != h)
      return ctx.error("gamma, beta and bias must have " + std::to_string(h) +
                       " elements, one has " + std::to_string(t->numel()));
  for (const ir::Tensor* t : {&skip, &gamma, beta, bias})
    if (t != nullptr && t->dtype() != x.dtype())
      return ctx.error("all inputs must have the input's element type");
  const double eps = ctx.node().attr_float("epsilon", 1e-12f);
  std::vector<int64_t> stat_dims = x.dims();
  stat_dims.back() = 1;
  return dispatch_float(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    const T* sd = skip.data<T>();
    const T* gd = gamma.data<T>();
    const T* bd = beta != nullptr ? beta->data<T>() : nullptr;
    const T* biasd = bias != nullptr ? bias->data<T>() : nullptr;
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x.dtype(), x.dims()));
    T* yd = y->mutable_data<T>();
    T* sum_out = nullptr;
    if (ctx.wants_output(3)) {
      XOPT_ASSIGN_OR_RETURN(ir::Tensor * s, ctx.output(3, x.dtype(), x.dims()));
      sum_out = s->mutable_data<T>();
    }
    std::vector<double> means(static_cast<size_t>(rows)), invs(static_cast<size_t>(rows));
    std::vector<double> v(static_cast<size_t>(h));
    const int64_t skip_n = skip.numel();
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0.0;
      for (int64_t i = 0; i < h; ++i) {
        const int64_t at = r * h + i;
        double s = static_cast<double>(to_compute(xd[at])) +
                   static_cast<double>(to_compute(sd[at % skip_n]));
        if (biasd != nullptr) s += static_cast<double>(to_compute(biasd[i]));
        // The sum is rounded to T as onnxruntime stores it before normalizing.
        const T st = from_compute<T>(static_cast<compute_t<T>>(s));
        if (sum_out != nullptr) sum_out[at] = st;
        v[i] = static_cast<double>(to_compute(st));
        mean += v[i];
      }
      mean /= static_cast<double>(h);
      double var = 0.0;
      for (int64_t i = 0; i < h; ++i) var += (v[i] - mean) * (v[i] - mean);
      var /= static_cast<double>(h);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < h; ++i) {
        double o = (v[i] - mean) * inv * static_cast<double>(to_compute(gd[i]));
        if (bd != nullptr) o += static_cast<double>(to_compute(bd[i]));
        yd[r * h + i] = from_compute<T>(static_cast<compute_t<T>>(o));
      }
      means[r] = mean;
      invs[r] = inv;
    }
    for (size_t i = 1; i <= 2 && i < ctx.num_outputs(); ++i) {
      if (!ctx.wants_output(i)) continue;
      ir::DType dt = ctx.node().output(i)->dtype();
      if (dt == ir::DType::kUndefined) dt = is_half(x.dtype()) ? ir::DType::kFloat : x.dtype();
      XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output(i, dt, stat_dims));
      const std::vector<double>& src = i == 1 ? means : invs;
      XOPT_RETURN_IF_ERROR(dispatch_float(dt, [&](auto otag) -> Status {
        using U = typename decltype(otag)::type;
        U* od = o->mutable_data<U>();
        for (int64_t r = 0; r < rows; ++r)
          od[r] = from_compute<U>(static_cast<compute_t<U>>(src[r]));
        return Status::ok();
      }));
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL(kMs, "FusedConv", 1, 1, fused_conv);
XOPT_CPU_KERNEL(kMs, "FusedGemm", 1, 1, fused_gemm);
XOPT_CPU_KERNEL(kMs, "FusedMatMul", 1, 1, fused_matmul);
XOPT_CPU_KERNEL(kMs, "SkipLayerNormalization", 1, 1, skip_layer_norm);

}  // namespace xopt::exec::nn
