// Helpers shared by the NN kernels (nn_*.cc): spatial attribute handling for convolution and
// pooling, float widening for the half types, and the activations of the com.microsoft fused ops.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/cpu/dispatch.h"
#include "executor/cpu/kernel.h"
#include "executor/window.h"
#include "ir/tensor.h"

namespace xopt::exec::nn {

// The newest opset number these kernels have been checked against (ONNX 1.23: 28). None of the NN
// ops has a version newer than 22, so a kernel registered "until kLatestOpset" is current.
inline constexpr int kLatestOpset = 28;

// Product of v[from, to). Written over pointers: GCC 12 at -O3 proved the index form's loop
// "invokes undefined behavior" at iteration 2^61 (-Waggressive-loop-optimizations) once inlined.
inline int64_t product(const std::vector<int64_t>& v, size_t from = 0, size_t to = SIZE_MAX) {
  const size_t end = std::min(to, v.size());
  int64_t p = 1;
  for (const int64_t* it = v.data() + std::min(from, end); it != v.data() + end; ++it) p *= *it;
  return p;
}

// The Conv/Pool window (executor/window.h: the geometry both executors share), errors naming the
// node. `ceil_mode` is the pooling flag (false for Conv).
inline Result<Window> make_window(const KernelContext& ctx, const std::vector<int64_t>& x_dims,
                                  std::vector<int64_t> kernel, bool ceil_mode,
                                  bool use_dilations = true) {
  Result<Window> w = window_of(ctx.node(), x_dims, std::move(kernel), ceil_mode, use_dilations);
  if (!w.is_ok()) return ctx.error(w.status().message());
  return w;
}

// The float copy of a float16/bfloat16/float tensor (shares the bytes when already float).
inline ir::Tensor to_float_tensor(const ir::Tensor& t) {
  if (t.dtype() == ir::DType::kFloat) return t;
  ir::Tensor out(ir::DType::kFloat, t.dims());
  float* o = out.mutable_data<float>();
  const int64_t n = t.numel();
  if (t.dtype() == ir::DType::kFloat16) {
    const auto* p = t.data<ir::Float16>();
    for (int64_t i = 0; i < n; ++i) o[i] = ir::half_to_float(p[i].bits);
  } else if (t.dtype() == ir::DType::kBFloat16) {
    const auto* p = t.data<ir::BFloat16>();
    for (int64_t i = 0; i < n; ++i) o[i] = ir::bfloat16_to_float(p[i].bits);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(t.as_double(i));
  }
  return out;
}

// Writes float values into `dst` converting to its dtype (float, float16, bfloat16, double).
inline void store_from_float(const float* src, ir::Tensor* dst) {
  const int64_t n = dst->numel();
  switch (dst->dtype()) {
    case ir::DType::kFloat:
      std::copy(src, src + n, dst->mutable_data<float>());
      break;
    case ir::DType::kFloat16: {
      auto* p = dst->mutable_data<ir::Float16>();
      for (int64_t i = 0; i < n; ++i) p[i].bits = ir::float_to_half(src[i]);
      break;
    }
    case ir::DType::kBFloat16: {
      auto* p = dst->mutable_data<ir::BFloat16>();
      for (int64_t i = 0; i < n; ++i) p[i].bits = ir::float_to_bfloat16(src[i]);
      break;
    }
    case ir::DType::kDouble: {
      auto* p = dst->mutable_data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] = src[i];
      break;
    }
    default:
      break;
  }
}

inline bool is_half(ir::DType t) {
  return t == ir::DType::kFloat16 || t == ir::DType::kBFloat16;
}

// Checks that optional/required inputs exist and returns a clear error otherwise.
inline Status require_inputs(const KernelContext& ctx, std::initializer_list<size_t> which) {
  for (size_t i : which)
    if (ctx.input(i) == nullptr)
      return ctx.error("required input " + std::to_string(i) + " is missing");
  return Status::ok();
}

// The activation of com.microsoft FusedConv / FusedGemm. FusedConv (onnxruntime's MLAS activations)
// takes Relu, Tanh, Sigmoid, LeakyRelu (alpha), Clip (min, max) and HardSigmoid (alpha, beta) with
// parameters in activation_params, which must carry exactly the parameters the activation takes.
// FusedGemm (onnxruntime's element-wise functors) takes Relu, Tanh, Sigmoid, LeakyRelu, Elu,
// HardSigmoid, Selu, ThresholdedRelu, Softplus, Softsign, ScaledTanh and ParametricSoftplus with
// parameters in activation_alpha / activation_beta / activation_gamma, required where used.
struct Activation {
  enum Kind {
    kIdentity,
    kRelu,
    kTanh,
    kSigmoid,
    kLeakyRelu,
    kClip,
    kHardSigmoid,
    kElu,
    kSelu,
    kThresholdedRelu,
    kSoftplus,
    kSoftsign,
    kScaledTanh,
    kParametricSoftplus
  } kind = kIdentity;
  double alpha = 0, beta = 0, gamma = 0;  // Clip: alpha = min, beta = max

  template <typename C>
  C apply(C x) const {
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta), g = static_cast<C>(gamma);
    switch (kind) {
      case kIdentity:
        return x;
      case kRelu:
        return x > C(0) ? x : C(0);
      case kTanh:
        return std::tanh(x);
      case kSigmoid:
        return C(1) / (C(1) + std::exp(-x));
      case kLeakyRelu:
        return x >= C(0) ? x : a * x;
      case kClip:
        return std::min(std::max(x, a), b);
      case kHardSigmoid:
        return std::max(C(0), std::min(C(1), a * x + b));
      case kElu:
        return x >= C(0) ? x : a * (std::exp(x) - C(1));
      case kSelu:
        return g * (x > C(0) ? x : a * (std::exp(x) - C(1)));
      case kThresholdedRelu:
        return x > a ? x : C(0);
      case kSoftplus:
        return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
      case kSoftsign:
        return x / (C(1) + std::abs(x));
      case kScaledTanh:
        return a * std::tanh(b * x);
      case kParametricSoftplus: {
        const C t = b * x;
        return a * (t > C(0) ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)));
      }
    }
    return x;
  }
  template <typename C>
  void apply(C* p, int64_t n) const {
    if (kind == kIdentity) return;
    if (kind == kRelu) {  // the common case, as a loop that vectorizes
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] > C(0) ? p[i] : C(0);
      return;
    }
    for (int64_t i = 0; i < n; ++i) p[i] = apply(p[i]);
  }
};

// FusedConv's activation / activation_params.
inline Result<Activation> read_conv_activation(const KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  Activation a;
  if (!node.has_attr("activation")) return a;
  const std::string name = node.attr_string("activation", "");
  const std::vector<float> params = node.attr_floats("activation_params");
  size_t want = 0;
  if (name == "Relu")
    a.kind = Activation::kRelu;
  else if (name == "Tanh")
    a.kind = Activation::kTanh;
  else if (name == "Sigmoid")
    a.kind = Activation::kSigmoid;
  else if (name == "LeakyRelu")
    a.kind = Activation::kLeakyRelu, want = 1;
  else if (name == "Clip")
    a.kind = Activation::kClip, want = 2;
  else if (name == "HardSigmoid")
    a.kind = Activation::kHardSigmoid, want = 2;
  else
    return ctx.unsupported(
        "activation '" + name +
        "' (FusedConv supports Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid)");
  if (params.size() != want)
    return ctx.error("activation " + name + " needs " + std::to_string(want) +
                     " activation_params, got " + std::to_string(params.size()));
  if (want > 0) a.alpha = params[0];
  if (want > 1) a.beta = params[1];
  return a;
}

// FusedGemm's activation / activation_alpha / activation_beta / activation_gamma.
inline Result<Activation> read_gemm_activation(const KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  Activation a;
  if (!node.has_attr("activation")) return a;
  const std::string name = node.attr_string("activation", "");
  struct Entry {
    const char* name;
    Activation::Kind kind;
    bool alpha, beta, gamma;
  };
  static const Entry kTable[] = {
      {"Relu", Activation::kRelu, false, false, false},
      {"Tanh", Activation::kTanh, false, false, false},
      {"Sigmoid", Activation::kSigmoid, false, false, false},
      {"LeakyRelu", Activation::kLeakyRelu, true, false, false},
      {"Elu", Activation::kElu, true, false, false},
      {"HardSigmoid", Activation::kHardSigmoid, true, true, false},
      {"Selu", Activation::kSelu, true, false, true},
      {"ThresholdedRelu", Activation::kThresholdedRelu, true, false, false},
      {"Softplus", Activation::kSoftplus, false, false, false},
      {"Softsign", Activation::kSoftsign, false, false, false},
      {"ScaledTanh", Activation::kScaledTanh, true, true, false},
      {"ParametricSoftplus", Activation::kParametricSoftplus, true, true, false},
  };
  for (const Entry& e : kTable) {
    if (name != e.name) continue;
    a.kind = e.kind;
    const std::pair<bool, const char*> need[] = {
        {e.alpha, "activation_alpha"}, {e.beta, "activation_beta"}, {e.gamma, "activation_gamma"}};
    for (const auto& [needed, attr] : need)
      if (needed && !node.has_attr(attr))
        return ctx.error("activation " + name + " needs attribute " + attr);
    a.alpha = node.attr_float("activation_alpha", 0.0f);
    a.beta = node.attr_float("activation_beta", 0.0f);
    a.gamma = node.attr_float("activation_gamma", 0.0f);
    return a;
  }
  return ctx.unsupported("activation '" + name + "' is not one FusedGemm supports");
}

}  // namespace xopt::exec::nn
