// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ai.onnx 12+): input [N, C, d1...],
// target [N, d1...] of class indices, optional weight [C]. Per element
//   loss = -input[n, target, d...] * w,  w = weight[target] (1 without weight), 0 where
//   target == ignore_index;
// reduction "none" keeps target's shape, "sum" adds, "mean" divides the sum by the sum of w.
// SoftmaxCrossEntropyLoss applies log-softmax over C first and can output it (log_prob).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

Status loss(KernelContext& ctx, bool softmax) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* target = ctx.input(1);
  const ir::Tensor* weight = ctx.input(2);
  if (x == nullptr || target == nullptr) return ctx.error("input and target are required");
  const auto& xd = x->dims();
  if (xd.size() < 2) return ctx.error("input must have rank >= 2 ([N, C, ...])");
  const int64_t n = xd[0], c = xd[1], d = prod(xd, 2);
  std::vector<int64_t> want = {n};
  want.insert(want.end(), xd.begin() + 2, xd.end());
  if (target->dims() != want)
    return ctx.error("target " + ir::dims_string(target->dims()) + " must be " +
                     ir::dims_string(want));
  if (weight != nullptr && weight->numel() != c)
    return ctx.error("weight must have C = " + std::to_string(c) + " elements");
  const std::string reduction = ctx.node().attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.error("unknown reduction '" + reduction + "'");
  const bool has_ignore = ctx.node().has_attr("ignore_index");
  const int64_t ignore = ctx.node().attr_int("ignore_index", 0);
  std::vector<double> xv = doubles(*x);
  if (softmax) {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < d; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < c; ++k)
          mx = std::max(mx, xv[static_cast<size_t>((b * c + k) * d + i)]);
        double sum = 0.0;
        for (int64_t k = 0; k < c; ++k)
          sum += std::exp(xv[static_cast<size_t>((b * c + k) * d + i)] - mx);
        const double lse = mx + std::log(sum);
        for (int64_t k = 0; k < c; ++k) xv[static_cast<size_t>((b * c + k) * d + i)] -= lse;
      }
  }
  const std::vector<int64_t> tv = target->to_int64_vector();
  const std::vector<double> wv = weight != nullptr ? doubles(*weight) : std::vector<double>();
  std::vector<double> l(tv.size(), 0.0);
  double wsum = 0.0, lsum = 0.0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < d; ++i) {
      const auto at = static_cast<size_t>(b * d + i);
      const int64_t t = tv[at];
      if (has_ignore && t == ignore) continue;
      if (t < 0 || t >= c)
        return ctx.error("target " + std::to_string(t) + " is outside [0, " + std::to_string(c) +
                         ")");
      const double w = weight != nullptr ? wv[static_cast<size_t>(t)] : 1.0;
      l[at] = -xv[static_cast<size_t>((b * c + t) * d + i)] * w;
      wsum += w;
      lsum += l[at];
    }
  const ir::DType dt = x->dtype();
  if (reduction == "none") {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(0, dt, want));
    XOPT_RETURN_IF_ERROR(store(l, o));
  } else {
    const double r = reduction == "sum" ? lsum : lsum / wsum;
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(0, dt, {}));
    XOPT_RETURN_IF_ERROR(store({r}, o));
  }
  if (softmax && ctx.wants_output(1)) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(1, dt, xd));
    XOPT_RETURN_IF_ERROR(store(xv, o));
  }
  return Status::ok();
}

Status nll_loss(KernelContext& ctx) {
  return loss(ctx, false);
}
Status softmax_cross_entropy(KernelContext& ctx) {
  return loss(ctx, true);
}

}  // namespace

XOPT_CPU_KERNEL("", "NegativeLogLikelihoodLoss", 12, kLatest, nll_loss);
XOPT_CPU_KERNEL("", "SoftmaxCrossEntropyLoss", 12, kLatest, softmax_cross_entropy);

}  // namespace xopt::exec::ops
