// Helpers shared by the library-backed CUDA kernels (conv.cc, pool.cc, gemm.cc): the com.microsoft
// fused activations as device parameters, the Conv/Pool window geometry (executor/window.h, the
// CPU reference's rules, read from the node at compile time), and owning cuDNN descriptors.
#pragma once

#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/kernels/conv_epilogue.cuh"
#include "executor/cuda/kernels/launch_params.h"
#include "executor/window.h"
#include "ir/dims_string.h"

namespace xopt::cuda {

inline int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// FusedConv's activation / activation_params (Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid).
inline Result<ActParams> read_conv_activation(const CompileContext& ctx) {
  const ir::Node& node = ctx.node();
  ActParams a;
  if (!node.has_attr("activation")) return a;
  const std::string name = node.attr_string("activation", "");
  const std::vector<float> params = node.attr_floats("activation_params");
  size_t want = 0;
  if (name == "Relu") {
    a.kind = ActKind::kRelu;
  } else if (name == "Tanh") {
    a.kind = ActKind::kTanh;
  } else if (name == "Sigmoid") {
    a.kind = ActKind::kSigmoid;
  } else if (name == "LeakyRelu") {
    a.kind = ActKind::kLeakyRelu, want = 1;
  } else if (name == "Clip") {
    a.kind = ActKind::kClip, want = 2;
  } else if (name == "HardSigmoid") {
    a.kind = ActKind::kHardSigmoid, want = 2;
  } else {
    return ctx.unsupported("activation '" + name +
                           "' (FusedConv supports Relu, Tanh, Sigmoid, LeakyRelu, Clip, "
                           "HardSigmoid)");
  }
  if (params.size() != want)
    return ctx.error("activation " + name + " needs " + std::to_string(want) +
                     " activation_params, got " + std::to_string(params.size()));
  if (want > 0) a.alpha = params[0];
  if (want > 1) a.beta = params[1];
  return a;
}

// FusedGemm's activation / activation_alpha / activation_beta / activation_gamma.
inline Result<ActParams> read_gemm_activation(const CompileContext& ctx) {
  const ir::Node& node = ctx.node();
  ActParams a;
  if (!node.has_attr("activation")) return a;
  const std::string name = node.attr_string("activation", "");
  struct Entry {
    const char* name;
    ActKind kind;
    bool alpha, beta, gamma;
  };
  static const Entry kTable[] = {
      {"Relu", ActKind::kRelu, false, false, false},
      {"Tanh", ActKind::kTanh, false, false, false},
      {"Sigmoid", ActKind::kSigmoid, false, false, false},
      {"LeakyRelu", ActKind::kLeakyRelu, true, false, false},
      {"Elu", ActKind::kElu, true, false, false},
      {"HardSigmoid", ActKind::kHardSigmoid, true, true, false},
      {"Selu", ActKind::kSelu, true, false, true},
      {"ThresholdedRelu", ActKind::kThresholdedRelu, true, false, false},
      {"Softplus", ActKind::kSoftplus, false, false, false},
      {"Softsign", ActKind::kSoftsign, false, false, false},
      {"ScaledTanh", ActKind::kScaledTanh, true, true, false},
      {"ParametricSoftplus", ActKind::kParametricSoftplus, true, true, false},
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

// The Conv/Pool window (executor/window.h: the CPU reference's geometry), errors naming the node.
using exec::Window;
inline Result<Window> make_window(const CompileContext& ctx, const std::vector<int64_t>& x_dims,
                                  std::vector<int64_t> kernel, bool ceil_mode,
                                  bool use_dilations = true) {
  Result<Window> w =
      exec::window_of(ctx.node(), x_dims, std::move(kernel), ceil_mode, use_dilations);
  if (!w.is_ok()) return ctx.error(w.status().message());
  return w;
}

// Checks that the planned output has the dims the kernel computes.
inline Status check_output_dims(const CompileContext& ctx, size_t i,
                                const std::vector<int64_t>& want) {
  const DeviceTensor* y = ctx.output(i);
  if (y == nullptr) return ctx.error("output " + std::to_string(i) + " is missing");
  if (y->dims != want)
    return ctx.error("planned output " + std::to_string(i) + " is " + ir::dims_string(y->dims) +
                     " but the kernel computes " + ir::dims_string(want));
  return Status::ok();
}

// The one float element type (float32, float16 or bfloat16) of inputs `which` (omitted ones
// skipped) and output 0: an unsupported-type error for another type or a mix.
inline Result<ir::DType> require_float(const CompileContext& ctx,
                                       std::initializer_list<size_t> which) {
  std::optional<ir::DType> t;
  auto check = [&](const DeviceTensor* d, const std::string& what) -> Status {
    if (d == nullptr) return Status::ok();
    if (d->dtype != ir::DType::kFloat && d->dtype != ir::DType::kFloat16 &&
        d->dtype != ir::DType::kBFloat16)
      return ctx.unsupported(what + " is " + std::string(ir::dtype_name(d->dtype)) +
                             " (float32, float16, bfloat16 only)");
    if (t && *t != d->dtype)
      return ctx.unsupported(what + " is " + std::string(ir::dtype_name(d->dtype)) +
                             " but another operand " + std::string(ir::dtype_name(*t)) +
                             " (mixed types are not supported on the GPU)");
    t = d->dtype;
    return Status::ok();
  };
  for (size_t i : which) XOPT_RETURN_IF_ERROR(check(ctx.input(i), "input " + std::to_string(i)));
  XOPT_RETURN_IF_ERROR(check(ctx.output(0), "output 0"));
  return t.value_or(ir::DType::kFloat);
}

// Our kernels' element type and cuDNN's data type for a float type.
inline ElemType elem_of(ir::DType t) {
  return t == ir::DType::kFloat16    ? ElemType::kHalf
         : t == ir::DType::kBFloat16 ? ElemType::kBFloat16
                                     : ElemType::kFloat;
}
inline cudnnDataType_t cudnn_type(ir::DType t) {
  return t == ir::DType::kFloat16    ? CUDNN_DATA_HALF
         : t == ir::DType::kBFloat16 ? CUDNN_DATA_BFLOAT16
                                     : CUDNN_DATA_FLOAT;
}

// Owning cuDNN descriptors, created at compile time and destroyed with the Launch that holds them.
struct CudnnDescriptors {
  std::vector<cudnnTensorDescriptor_t> tensors;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
  cudnnActivationDescriptor_t act = nullptr;

  CudnnDescriptors() = default;
  CudnnDescriptors(const CudnnDescriptors&) = delete;
  CudnnDescriptors& operator=(const CudnnDescriptors&) = delete;
  ~CudnnDescriptors() {
    for (cudnnTensorDescriptor_t t : tensors) cudnnDestroyTensorDescriptor(t);
    if (filter != nullptr) cudnnDestroyFilterDescriptor(filter);
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
    if (pool != nullptr) cudnnDestroyPoolingDescriptor(pool);
    if (act != nullptr) cudnnDestroyActivationDescriptor(act);
  }

  // A packed NCHW-style tensor descriptor of `type` (dims padded with ones to rank 4).
  Result<cudnnTensorDescriptor_t> tensor(std::vector<int64_t> dims,
                                         cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    while (dims.size() < 4) dims.push_back(1);
    std::vector<int> d(dims.size()), s(dims.size());
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      if (dims[i] > INT32_MAX || stride > INT32_MAX)
        return unsupported("tensor " + ir::dims_string(dims) +
                           " is too large for cuDNN's int dims");
      d[i] = static_cast<int>(dims[i]);
      s[i] = static_cast<int>(stride);
      stride *= dims[i];
    }
    cudnnTensorDescriptor_t t = nullptr;
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&t));
    tensors.push_back(t);
    XOPT_CUDNN_RETURN_IF_ERROR(
        cudnnSetTensorNdDescriptor(t, type, static_cast<int>(d.size()), d.data(), s.data()));
    return t;
  }
};

inline std::vector<int> to_ints(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

}  // namespace xopt::cuda
