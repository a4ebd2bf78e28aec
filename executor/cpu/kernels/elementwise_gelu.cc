// Gelu (ONNX opset 20, approximate = "none" | "tanh") and the onnxruntime contrib ops com.microsoft
// Gelu (erf form), FastGelu (tanh form, optional bias added first), BiasGelu (Gelu(A + B)) and
// QuickGelu (x * sigmoid(alpha * x); alpha 1 is Swish/SiLU).
#include <cmath>

#include "executor/cpu/kernels/elementwise.h"

namespace xopt::exec {
namespace {

using ew::kLastOpset;

// Computed in double and rounded once: the reference is exact to the output type's precision.
template <typename C>
C gelu_erf(C v) {
  const double d = static_cast<double>(v);
  return static_cast<C>(0.5 * d * (1.0 + std::erf(d * M_SQRT1_2)));
}
template <typename C>
C gelu_tanh(C v) {
  const double d = static_cast<double>(v);
  const double k = 0.7978845608028654;  // sqrt(2 / pi)
  return static_cast<C>(0.5 * d * (1.0 + std::tanh(k * (d + 0.044715 * d * d * d))));
}

// y = g(x) or, with a bias input at `bias_index`, g(x + bias) (bias broadcast numpy-style).
template <bool kTanh>
Status gelu_with_bias(KernelContext& ctx, int bias_index) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  const ir::Tensor* bias = bias_index >= 0 ? ctx.input(static_cast<size_t>(bias_index)) : nullptr;
  if (bias != nullptr) XOPT_RETURN_IF_ERROR(ew::same_dtype(ctx, {x, bias}));
  return dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    auto g = [](auto v) { return kTanh ? gelu_tanh(v) : gelu_erf(v); };
    if (bias == nullptr) return ew::map_unary<T, T>(ctx, *x, x->dtype(), g);
    return ew::map_binary<T, T, T>(ctx, *x, *bias, x->dtype(),
                                   [&](auto a, auto b) { return g(a + b); });
  });
}

Status gelu(KernelContext& ctx) {
  const std::string approx = ctx.node().attr_string("approximate", "none");
  if (approx == "none") return gelu_with_bias<false>(ctx, -1);
  if (approx == "tanh") return gelu_with_bias<true>(ctx, -1);
  return ctx.error("approximate must be \"none\" or \"tanh\", got \"" + approx + "\"");
}

Status ms_gelu(KernelContext& ctx) {
  return gelu_with_bias<false>(ctx, -1);
}
Status ms_fast_gelu(KernelContext& ctx) {
  return gelu_with_bias<true>(ctx, 1);
}
Status ms_bias_gelu(KernelContext& ctx) {
  if (ctx.input(1) == nullptr) return ctx.error("BiasGelu needs a bias input");
  return gelu_with_bias<false>(ctx, 1);
}

// onnxruntime's default alpha is 1.702 (the sigmoid approximation of GELU).
Status ms_quick_gelu(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  const double alpha = ctx.node().attr_float("alpha", 1.702f);
  return dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return ew::map_unary<T, T>(ctx, *x, x->dtype(), [alpha](auto v) {
      using C = decltype(v);
      const double d = static_cast<double>(v);
      return static_cast<C>(d / (1.0 + std::exp(-alpha * d)));
    });
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Gelu", 20, kLastOpset, gelu);
XOPT_CPU_KERNEL("com.microsoft", "Gelu", 1, 1, ms_gelu);
XOPT_CPU_KERNEL("com.microsoft", "FastGelu", 1, 1, ms_fast_gelu);
XOPT_CPU_KERNEL("com.microsoft", "BiasGelu", 1, 1, ms_bias_gelu);
XOPT_CPU_KERNEL("com.microsoft", "QuickGelu", 1, 1, ms_quick_gelu);

}  // namespace xopt::exec
