#include "passes/fuse/fuse_util.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <unordered_set>

#include "passes/rewrite.h"

namespace xopt::passes::fuse {

ir::Node* sole_reader(const ir::Value* v) {
  if (v == nullptr || v->is_graph_output() || v->uses().size() != 1) return nullptr;
  const ir::Use& u = v->uses().front();
  return u.index < 0 ? nullptr : u.node;
}

bool is_onnx_op(const ir::Node& n, const char* op) {
  return (n.domain().empty() || n.domain() == "ai.onnx") && n.op_type() == op;
}

std::optional<std::vector<double>> float_values(const ir::Tensor& t) {
  const int64_t n = t.numel();
  std::vector<double> out(static_cast<size_t>(n));
  if (t.dtype() == ir::DType::kFloat) {
    const float* p = t.data<float>();
    std::copy(p, p + n, out.begin());
  } else if (t.dtype() == ir::DType::kDouble) {
    const double* p = t.data<double>();
    std::copy(p, p + n, out.begin());
  } else {
    return std::nullopt;
  }
  return out;
}

ir::Tensor make_float_tensor(ir::DType dtype, std::vector<int64_t> dims,
                             const std::vector<double>& values) {
  ir::Tensor t(dtype, std::move(dims));
  if (dtype == ir::DType::kFloat) {
    float* p = t.mutable_data<float>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
  } else {
    std::copy(values.begin(), values.end(), t.mutable_data<double>());
  }
  return t;
}

namespace {

template <typename T>
void scale_blocks_as(const ir::Tensor& w, ir::Tensor& out, int64_t inner,
                     const std::function<double(int64_t)>& scale) {
  const T* src = w.data<T>();
  T* dst = out.mutable_data<T>();
  const int64_t blocks = inner > 0 ? w.numel() / inner : 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const double s = scale(b);
    for (int64_t k = b * inner; k < (b + 1) * inner; ++k)
      dst[k] = static_cast<T>(static_cast<double>(src[k]) * s);
  }
}

template <typename T>
std::vector<double> block_sums_as(const ir::Tensor& w, int64_t inner) {
  const T* src = w.data<T>();
  const int64_t blocks = inner > 0 ? w.numel() / inner : 0;
  std::vector<double> out(static_cast<size_t>(blocks), 0.0);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t k = b * inner; k < (b + 1) * inner; ++k) out[b] += static_cast<double>(src[k]);
  return out;
}

}  // namespace

ir::Tensor scale_blocks(const ir::Tensor& w, int64_t inner,
                        const std::function<double(int64_t)>& scale) {
  ir::Tensor out(w.dtype(), w.dims());
  if (w.dtype() == ir::DType::kFloat)
    scale_blocks_as<float>(w, out, inner, scale);
  else
    scale_blocks_as<double>(w, out, inner, scale);
  return out;
}

std::vector<double> block_sums(const ir::Tensor& w, int64_t inner) {
  return w.dtype() == ir::DType::kFloat ? block_sums_as<float>(w, inner)
                                        : block_sums_as<double>(w, inner);
}

void drop_if_unused(ir::Graph& g, ir::Value* v, std::unordered_set<const ir::Node*>* removed) {
  if (v == nullptr || v->has_uses() || v->is_graph_input() || v->is_graph_output()) return;
  if (v->is_initializer()) {
    g.remove_initializer(v);
  } else if (v->producer() != nullptr && v->producer()->is("Constant")) {
    if (removed != nullptr) removed->insert(v->producer());
    g.remove_node(v->producer());
  }
}

ir::Node* replace_chain(ir::Graph& g, const std::string& op, const std::string& domain,
                        const std::vector<ir::Value*>& inputs,
                        const std::vector<onnx::AttributeProto>& attrs, ir::Value* result,
                        const std::vector<ir::Node*>& replaced, ir::Node* anchor,
                        std::unordered_set<const ir::Node*>& removed) {
  std::string name = release_name(g, result);
  ir::Node* fused = g.add_node(op, inputs, {name}, domain, anchor);
  for (const auto& a : attrs) fused->set_attr(a);
  for (const ir::Node* r : replaced) fused->add_provenance(*r);
  ir::Value* out = fused->output(0);
  out->set_dtype(result->dtype());
  out->set_shape(result->shape());
  g.replace_all_uses(result, out);
  // Values the chain read from outside it: its own intermediate values are freed with their nodes
  // below, and must not be looked at afterwards (ASan caught drop_if_unused reading a freed Value
  // in fuse-conv-activation on every shared conv model; found by fuzz/fuzz_model.cc's shared-model
  // run).
  std::unordered_set<const ir::Value*> internal;
  for (ir::Node* r : replaced)
    for (ir::Value* v : r->outputs()) internal.insert(v);
  std::vector<ir::Value*> read;
  for (ir::Node* r : replaced) {
    for (ir::Value* v : r->inputs())
      if (v != nullptr && internal.count(v) == 0) read.push_back(v);
    removed.insert(r);
  }
  fused->set_name(replaced.front()->name());
  // Readers go before the nodes they read from.
  std::vector<ir::Node*> left = replaced;
  while (!left.empty()) {
    auto unread = std::find_if(left.begin(), left.end(), [](const ir::Node* r) {
      return std::none_of(r->outputs().begin(), r->outputs().end(), [](const ir::Value* v) {
        return v != nullptr && (v->has_uses() || v->is_graph_output());
      });
    });
    assert(unread != left.end() && "a replaced node is still read outside the chain");
    if (unread == left.end()) break;
    g.remove_node(*unread);
    left.erase(unread);
  }
  std::unordered_set<ir::Value*> seen;
  for (ir::Value* v : read)
    if (seen.insert(v).second) drop_if_unused(g, v, &removed);
  return fused;
}

namespace {

onnx::AttributeProto float_attr(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

// A Clip bound: the attribute before opset 11, a constant scalar input from 11 on; absent means
// unbounded. nullopt when the bound is not a known constant.
std::optional<float> clip_bound(const ir::Node& n, size_t input, const char* attr, float dflt) {
  if (n.opset() < 11) return n.attr_float(attr, dflt);
  const ir::Value* v = n.input(input);
  if (v == nullptr) return dflt;
  auto t = constant_value(v);
  if (!t || t->numel() != 1 || t->dtype() != ir::DType::kFloat) return std::nullopt;
  return t->data<float>()[0];
}

}  // namespace

std::optional<Activation> match_activation(const ir::Node& n) {
  if (!(n.domain().empty() || n.domain() == "ai.onnx") || n.num_outputs() != 1) return std::nullopt;
  const ir::Value* x = n.input(0);
  if (x == nullptr || x->dtype() != ir::DType::kFloat) return std::nullopt;
  Activation a;
  a.name = n.op_type();
  const std::string& op = n.op_type();
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh") return a;
  if (op == "LeakyRelu") {
    float alpha = n.attr_float("alpha", 0.01f);
    a.params = {alpha};
    a.gemm_attrs = {float_attr("activation_alpha", alpha)};
    return a;
  }
  if (op == "HardSigmoid") {
    float alpha = n.attr_float("alpha", 0.2f), beta = n.attr_float("beta", 0.5f);
    a.params = {alpha, beta};
    a.gemm_attrs = {float_attr("activation_alpha", alpha), float_attr("activation_beta", beta)};
    return a;
  }
  if (op == "Clip") {
    constexpr float kMax = std::numeric_limits<float>::max();
    auto lo = clip_bound(n, 1, "min", -kMax);
    auto hi = clip_bound(n, 2, "max", kMax);
    if (!lo || !hi) return std::nullopt;
    a.params = {*lo, *hi};
    a.gemm = false;  // its bounds are inputs from opset 11 on, which FusedGemm cannot take
    return a;
  }
  // FusedGemm only, with the ONNX defaults written out.
  a.conv = false;
  if (op == "Softplus" || op == "Softsign") return a;
  if (op == "Elu" || op == "ThresholdedRelu") {
    a.gemm_attrs = {float_attr("activation_alpha", n.attr_float("alpha", 1.0f))};
    return a;
  }
  if (op == "Selu") {
    a.gemm_attrs = {
        float_attr("activation_alpha", n.attr_float("alpha", 1.67326319217681884765625f)),
        float_attr("activation_gamma", n.attr_float("gamma", 1.05070102214813232421875f))};
    return a;
  }
  return std::nullopt;
}

}  // namespace xopt::passes::fuse
