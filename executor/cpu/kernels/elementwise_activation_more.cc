// More activations: Mish, Swish, SwiGLU and Shrink, and Hardmax (one-hot of the first maximum
// along an axis). Computed in double, rounded once to the element type (the reference's Swish and
// SwiGLU round the sigmoid to the element type first; so do these).
#include <cmath>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

Status mish(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  std::vector<double> v = doubles(*x);
  for (double& e : v) e = e * std::tanh(std::log1p(std::exp(e)));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), x->dims()));
  return store(v, y);
}

Status swish(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const double alpha = ctx.node().attr_float("alpha", 1.0f);
  std::vector<double> v = doubles(*x);
  for (double& e : v) e = e * round_to(x->dtype(), sigmoid(alpha * e));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), x->dims()));
  return store(v, y);
}

Status swiglu(KernelContext& ctx) {
  const ir::Tensor* a = ctx.input(0);
  const ir::Tensor* b = ctx.input(1);
  if (a == nullptr || b == nullptr) return ctx.error("A and B are required");
  if (a->dims() != b->dims() || a->dtype() != b->dtype())
    return ctx.error("A " + ir::dims_string(a->dims()) + " and B " + ir::dims_string(b->dims()) +
                     " must have one shape and type (no broadcasting)");
  const double alpha = ctx.node().attr_float("alpha", 1.0f);
  const ir::DType t = a->dtype();
  std::vector<double> v = doubles(*a);
  const std::vector<double> bv = doubles(*b);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = round_to(t, v[i] * round_to(t, sigmoid(alpha * v[i]))) * bv[i];
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, t, a->dims()));
  return store(v, y);
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
Status shrink(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const double lambd = ctx.node().attr_float("lambd", 0.5f);
  const double bias = ctx.node().attr_float("bias", 0.0f);
  std::vector<double> v = doubles(*x);
  for (double& e : v) e = e < -lambd ? e + bias : e > lambd ? e - bias : 0.0;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), x->dims()));
  return store(v, y);
}

// Hardmax: before opset 13 the input is seen as 2-D [prod(dims[:axis]), prod(dims[axis:])]
// (axis default 1); from 13 it runs along one axis (default -1).
Status hardmax(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const auto rank = static_cast<int64_t>(x->rank());
  const bool legacy = ctx.opset() < 13;
  int64_t axis = ctx.node().attr_int("axis", legacy ? 1 : -1);
  if (axis < -rank || axis >= rank + (legacy ? 1 : 0))
    return ctx.error("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rank;
  const auto a = static_cast<size_t>(axis);
  int64_t outer, len, inner;
  if (legacy) {
    outer = prod(x->dims(), 0, a);
    len = prod(x->dims(), a);
    inner = 1;
  } else {
    outer = prod(x->dims(), 0, a);
    len = x->dims()[a];
    inner = prod(x->dims(), a + 1);
  }
  const std::vector<double> v = doubles(*x);
  std::vector<double> y(v.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      if (len == 0) continue;
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k)
        if (v[static_cast<size_t>((o * len + k) * inner + i)] >
            v[static_cast<size_t>((o * len + best) * inner + i)])
          best = k;
      y[static_cast<size_t>((o * len + best) * inner + i)] = 1.0;
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), x->dims()));
  return store(y, yt);
}

}  // namespace

XOPT_CPU_KERNEL("", "Mish", 18, kLatest, mish);
XOPT_CPU_KERNEL("", "Swish", 24, kLatest, swish);
XOPT_CPU_KERNEL("", "SwiGLU", 28, kLatest, swiglu);
XOPT_CPU_KERNEL("", "Shrink", 9, kLatest, shrink);
XOPT_CPU_KERNEL("", "Hardmax", 1, kLatest, hardmax);

}  // namespace xopt::exec::ops
