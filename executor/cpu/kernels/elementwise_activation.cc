// Activations: Relu, Elu, Selu, Celu, LeakyRelu, ThresholdedRelu, HardSigmoid, HardSwish, Softplus,
// PRelu, and Clip.
#include <cmath>
#include <limits>

#include "executor/cpu/kernels/elementwise.h"

namespace xopt::exec {
namespace {

using ew::kLastOpset;

// Applies f(v, attrs) over float types; `make` builds f from the node (reads attributes once).
template <typename Make>
KernelFn float_activation(Make make) {
  return [make](KernelContext& ctx) -> Status {
    XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
    auto f = make(ctx.node());
    return dispatch_float(x->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return ew::map_unary<T, T>(ctx, *x, x->dtype(), f);
    });
  };
}

Status relu(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (ew::is_int_v<T> && std::is_unsigned_v<T>) {
      return ctx.unsupported("Relu does not take " + std::string(ir::dtype_name(x->dtype())));
    } else {
      // NaN stays NaN.
      return ew::map_unary<T, T>(ctx, *x, x->dtype(),
                                 [](auto v) { return v < 0 ? decltype(v)(0) : v; });
    }
  });
}

const auto kElu = [](const ir::Node& n) {
  const double alpha = n.attr_float("alpha", 1.0f);
  return [alpha](auto v) {
    using C = decltype(v);
    return v < 0 ? static_cast<C>(alpha * (std::exp(static_cast<double>(v)) - 1.0)) : v;
  };
};
const auto kSelu = [](const ir::Node& n) {
  const double alpha = n.attr_float("alpha", 1.67326319217681884765625f);
  const double gamma = n.attr_float("gamma", 1.05070102214813232421875f);
  return [alpha, gamma](auto v) {
    using C = decltype(v);
    const double d = static_cast<double>(v);
    return static_cast<C>(v > 0 ? gamma * d : gamma * (alpha * std::exp(d) - alpha));
  };
};
const auto kCelu = [](const ir::Node& n) {
  const double alpha = n.attr_float("alpha", 1.0f);
  return [alpha](auto v) {
    using C = decltype(v);
    const double d = static_cast<double>(v);
    return static_cast<C>(std::max(0.0, d) + std::min(0.0, alpha * (std::exp(d / alpha) - 1.0)));
  };
};
const auto kLeakyRelu = [](const ir::Node& n) {
  const double alpha = n.attr_float("alpha", 0.01f);
  return [alpha](auto v) {
    using C = decltype(v);
    return v < 0 ? static_cast<C>(alpha * static_cast<double>(v)) : v;
  };
};
const auto kThresholdedRelu = [](const ir::Node& n) {
  const double alpha = n.attr_float("alpha", 1.0f);
  return [alpha](auto v) {
    using C = decltype(v);
    return static_cast<double>(v) > alpha ? v : C(0);
  };
};
const auto kHardSigmoid = [](const ir::Node& n) {
  const float alpha = n.attr_float("alpha", 0.2f);
  const float beta = n.attr_float("beta", 0.5f);
  return [alpha, beta](auto v) {
    using C = decltype(v);
    C t = static_cast<C>(alpha) * v + static_cast<C>(beta);
    return std::max(C(0), std::min(C(1), t));
  };
};
const auto kHardSwish = [](const ir::Node&) {
  return [](auto v) {
    using C = decltype(v);
    C t = v / C(6) + C(0.5);
    return v * std::max(C(0), std::min(C(1), t));
  };
};
const auto kSoftplus = [](const ir::Node&) {
  return [](auto v) {
    // log(1 + exp(v)) without overflow.
    return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
  };
};

// PRelu: y = x < 0 ? slope * x : x, slope broadcast (unidirectionally) to x.
Status prelu(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* slope, ew::required_input(ctx, 1));
  XOPT_RETURN_IF_ERROR(ew::same_dtype(ctx, {x, slope}));
  ir::Tensor s = *slope;
  if (!broadcast_to_check(s.dims(), x->dims()).is_ok()) {
    // Before opset 7 a 1-D slope of C elements applies per channel (axis 1).
    if (ctx.opset() < 7 && s.rank() == 1 && x->rank() >= 2 && s.dims()[0] == x->dims()[1]) {
      std::vector<int64_t> d(x->rank() - 1, 1);
      d[0] = s.dims()[0];
      s = s.reshaped(d);
    } else {
      return ctx.error("slope " + ir::dims_string(s.dims()) + " cannot be broadcast to X " +
                       ir::dims_string(x->dims()));
    }
  }
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return ew::map_binary<T, T, T>(ctx, *x, s, x->dtype(),
                                   [](auto v, auto a) { return v < 0 ? ew::mul(a, v) : v; });
  });
}

// Clip: bounds are attributes before opset 11, optional scalar inputs from 11 on. min > max gives
// max everywhere (min is applied first, as numpy.clip does); NaN stays NaN.
Status clip(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  const ir::Tensor* tmin = ctx.opset() >= 11 ? ctx.input(1) : nullptr;
  const ir::Tensor* tmax = ctx.opset() >= 11 ? ctx.input(2) : nullptr;
  for (const ir::Tensor* b : {tmin, tmax}) {
    if (b == nullptr) continue;
    if (b->dtype() != x->dtype())
      return ctx.error("bound is " + std::string(ir::dtype_name(b->dtype())) + " but input is " +
                       std::string(ir::dtype_name(x->dtype())));
    if (b->numel() != 1)
      return ctx.error("bound must be a scalar, got shape " + ir::dims_string(b->dims()));
  }
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    bool has_lo = false, has_hi = false;
    C lo{}, hi{};
    if (ctx.opset() < 11) {
      if constexpr (ew::is_float_v<T>) {
        lo = static_cast<C>(ctx.node().attr_float("min", std::numeric_limits<float>::lowest()));
        hi = static_cast<C>(ctx.node().attr_float("max", std::numeric_limits<float>::max()));
        has_lo = has_hi = true;
      } else {
        return ctx.unsupported("Clip before opset 11 takes float types only");
      }
    }
    if (tmin != nullptr) {
      lo = to_compute(tmin->data<T>()[0]);
      has_lo = true;
    }
    if (tmax != nullptr) {
      hi = to_compute(tmax->data<T>()[0]);
      has_hi = true;
    }
    return ew::map_unary<T, T>(ctx, *x, x->dtype(), [&](C v) {
      if (has_lo && v < lo) v = lo;
      if (has_hi && v > hi) v = hi;
      return v;
    });
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Relu", 1, kLastOpset, relu);
XOPT_CPU_KERNEL("", "Elu", 1, kLastOpset, float_activation(kElu));
XOPT_CPU_KERNEL("", "Selu", 1, kLastOpset, float_activation(kSelu));
XOPT_CPU_KERNEL("", "Celu", 12, kLastOpset, float_activation(kCelu));
XOPT_CPU_KERNEL("", "LeakyRelu", 1, kLastOpset, float_activation(kLeakyRelu));
XOPT_CPU_KERNEL("", "ThresholdedRelu", 10, kLastOpset, float_activation(kThresholdedRelu));
XOPT_CPU_KERNEL("", "HardSigmoid", 1, kLastOpset, float_activation(kHardSigmoid));
XOPT_CPU_KERNEL("", "HardSwish", 14, kLastOpset, float_activation(kHardSwish));
XOPT_CPU_KERNEL("", "Softplus", 1, kLastOpset, float_activation(kSoftplus));
XOPT_CPU_KERNEL("", "PRelu", 6, kLastOpset, prelu);
XOPT_CPU_KERNEL("", "Clip", 1, kLastOpset, clip);

}  // namespace xopt::exec
