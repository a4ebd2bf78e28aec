#include "planner/cost_model.h"

#include <algorithm>
#include <optional>

namespace xopt::planner {
namespace {

std::optional<std::vector<int64_t>> dims_of(const ir::Value* v) {
  if (v == nullptr || !v->is_tensor() || !v->shape().is_static()) return std::nullopt;
  return v->shape().static_dims();
}

double product(const std::vector<int64_t>& d, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < d.size(); ++i) p *= static_cast<double>(d[i]);
  return p;
}

bool is(const ir::Node& n, const char* domain, const char* op) {
  const bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
  return n.op_type() == op && (std::string(domain).empty() ? onnx_domain : n.domain() == domain);
}

}  // namespace

double node_flops(const ir::Node& n) {
  const bool conv = is(n, "", "Conv") || is(n, "com.microsoft", "FusedConv") ||
                    is(n, "", "ConvInteger") || is(n, "", "ConvTranspose");
  if (conv) {
    // Each output element (ConvTranspose: each input element) is a dot product over C/group x
    // kernel.
    auto w = dims_of(n.input(1));
    auto y = dims_of(is(n, "", "ConvTranspose") ? n.input(0) : n.output(0));
    if (!w || !y || w->size() < 2) return 0;
    // Conv weight [M, C/group, k...]: C/group x kernel per output element; ConvTranspose weight
    // [C, M/group, k...]: M/group x kernel per input element. Either way, dims 1.. of the weight.
    return 2.0 * product(*y) * product(*w, 1);
  }
  if (is(n, "", "Gemm")) {
    auto a = dims_of(n.input(0));
    auto y = dims_of(n.output(0));
    if (!a || !y || a->size() != 2) return 0;
    const double k = static_cast<double>(n.attr_int("transA", 0) != 0 ? (*a)[0] : (*a)[1]);
    return 2.0 * product(*y) * k;
  }
  if (is(n, "", "MatMul") || is(n, "com.microsoft", "FusedMatMul") || is(n, "", "MatMulInteger")) {
    auto a = dims_of(n.input(0));
    auto y = dims_of(n.output(0));
    if (!a || !y || a->empty()) return 0;
    const bool trans_a = n.attr_int("transA", 0) != 0 && a->size() >= 2;
    const double k = static_cast<double>(trans_a ? (*a)[a->size() - 2] : a->back());
    return 2.0 * product(*y) * k;
  }
  if (is(n, "com.microsoft", "MultiHeadAttention") || is(n, "", "Attention")) {
    // Q K^T and P V: 2 x 2 x (batch x query length x key length x hidden).
    auto q = dims_of(n.input(0));
    auto k = dims_of(n.input(1));
    if (!q || !k || q->size() < 3 || k->size() < 3) return 0;
    const double key_len = static_cast<double>(k->size() == 4 ? (*k)[2] : (*k)[1]);
    return 4.0 * product(*q) * key_len;
  }
  return 0;
}

double node_bytes(const ir::Node& n) {
  double bytes = 0;
  auto add = [&](const ir::Value* v) {
    if (auto d = dims_of(v)) bytes += product(*d) * static_cast<double>(ir::dtype_size(v->dtype()));
  };
  for (const ir::Value* v : n.inputs()) add(v);
  for (const ir::Value* v : n.outputs()) add(v);
  return bytes;
}

std::vector<double> estimate_node_ms(const std::vector<const ir::Node*>& order,
                                     const DeviceModel& device) {
  std::vector<double> ms;
  ms.reserve(order.size());
  for (const ir::Node* n : order)
    ms.push_back(device.launch_ms + std::max(node_flops(*n) / device.flops_per_ms,
                                             node_bytes(*n) / device.bytes_per_ms));
  return ms;
}

}  // namespace xopt::planner
