#include "ir/op_registry.h"

#include <algorithm>
#include <tuple>

#include "ir/ops/op_helpers.h"
#include "ir/value_type.h"

namespace xopt::ir {

// ---- InferenceContext ----

InferenceContext::InferenceContext(const Node& node, const KnownValues& known)
    : node_(node), known_(known), opset_(node.opset()), outputs_(node.num_outputs()) {}

DType InferenceContext::input_dtype(size_t i) const {
  const Value* v = input(i);
  return v != nullptr ? v->dtype() : DType::kUndefined;
}

const Shape& InferenceContext::input_shape(size_t i) const {
  static const Shape kUnknownRank;
  const Value* v = input(i);
  return v != nullptr ? v->shape() : kUnknownRank;
}

const Tensor* InferenceContext::input_constant(size_t i) const {
  const Value* v = input(i);
  if (v == nullptr) return nullptr;
  // Initializers that are also (overridable) graph inputs count too: their default is the value
  // every runtime and ONNX's own inference assume.
  if (v->initializer() != nullptr) return v->initializer();
  auto it = known_.constants.find(v);
  return it != known_.constants.end() ? &it->second : nullptr;
}

const SymData* InferenceContext::input_data(size_t i) const {
  const Value* v = input(i);
  if (v == nullptr) return nullptr;
  if (auto it = known_.data.find(v); it != known_.data.end()) return &it->second;
  if (auto it = constant_data_.find(i); it != constant_data_.end()) return &it->second;
  const Tensor* t = input_constant(i);
  if (t == nullptr || !(is_integer(t->dtype()) || t->dtype() == DType::kBool) ||
      t->numel() > kMaxDataElements)
    return nullptr;
  SymData d;
  d.reserve(static_cast<size_t>(t->numel()));
  for (int64_t k = 0; k < t->numel(); ++k) d.push_back(SymInt::known(t->as_int64(k)));
  return &(constant_data_[i] = std::move(d));
}

std::optional<std::vector<int64_t>> InferenceContext::input_ints(size_t i) const {
  if (const Tensor* t = input_constant(i);
      t != nullptr && (is_integer(t->dtype()) || t->dtype() == DType::kBool))
    return t->to_int64_vector();
  const SymData* d = input_data(i);
  if (d == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(d->size());
  for (const SymInt& e : *d) {
    if (!e.is_known()) return std::nullopt;
    out.push_back(*e.value);
  }
  return out;
}

std::optional<std::vector<double>> InferenceContext::input_doubles(size_t i) const {
  if (const Tensor* t = input_constant(i);
      t != nullptr && t->dtype() != DType::kString && t->dtype() != DType::kUndefined &&
      t->dtype() != DType::kComplex64 && t->dtype() != DType::kComplex128) {
    std::vector<double> out(static_cast<size_t>(t->numel()));
    for (int64_t k = 0; k < t->numel(); ++k) out[static_cast<size_t>(k)] = t->as_double(k);
    return out;
  }
  auto ints = input_ints(i);
  if (!ints) return std::nullopt;
  return std::vector<double>(ints->begin(), ints->end());
}

void InferenceContext::set_output(size_t i, DType dtype, Shape shape) {
  if (i >= outputs_.size() || node_.output(i) == nullptr) return;
  outputs_[i].set = true;
  outputs_[i].dtype = dtype;
  outputs_[i].shape = std::move(shape);
}

void InferenceContext::set_output_type(size_t i, const onnx::TypeProto& type) {
  if (type_kind(type) == TypeKind::kTensor) {
    DType d;
    Shape s;
    parse_tensor_type(type, &d, &s);
    set_output(i, d, std::move(s));
    return;
  }
  if (i >= outputs_.size() || node_.output(i) == nullptr) return;
  outputs_[i].type = type;
}

void InferenceContext::set_output_data(size_t i, SymData data) {
  if (i >= outputs_.size() || node_.output(i) == nullptr) return;
  if (static_cast<int64_t>(data.size()) > kMaxDataElements) return;
  outputs_[i].data = std::move(data);
}

void InferenceContext::set_output_constant(size_t i, Tensor value) {
  if (i >= outputs_.size() || node_.output(i) == nullptr) return;
  outputs_[i].constant = std::move(value);
}

Status InferenceContext::error(const std::string& what) const {
  return invalid_model(node_.describe() + ": " + what);
}

// ---- registry ----

namespace {

struct Registry {
  std::vector<OpInfo> ops;
  std::unordered_map<std::string, std::vector<size_t>> by_key;
};

std::string key_of(std::string_view domain, std::string_view op_type) {
  std::string k(domain == "ai.onnx" ? std::string_view() : domain);
  k += '\n';
  k += op_type;
  return k;
}

const Registry& registry() {
  static const Registry reg = [] {
    Registry r;
    ops::register_elementwise_ops(r.ops);
    ops::register_binary_ops(r.ops);
    ops::register_conv_pool_ops(r.ops);
    ops::register_norm_ops(r.ops);
    ops::register_math_ops(r.ops);
    ops::register_tensor_ops(r.ops);
    ops::register_slice_split_ops(r.ops);
    ops::register_gather_ops(r.ops);
    ops::register_constant_ops(r.ops);
    ops::register_shape_ops(r.ops);
    ops::register_reduce_ops(r.ops);
    ops::register_resize_ops(r.ops);
    ops::register_contrib_ops(r.ops);
    ops::register_rnn_ops(r.ops);
    ops::register_quant_ops(r.ops);
    ops::register_attention_ops(r.ops);
    ops::register_signal_ops(r.ops);
    ops::register_vision_ops(r.ops);
    ops::register_index_ops(r.ops);
    ops::register_random_ops(r.ops);
    ops::register_control_flow_ops(r.ops);
    ops::register_sequence_ops(r.ops);
    ops::register_ml_ops(r.ops);
    ops::register_quant_ort_ops(r.ops);
    std::sort(r.ops.begin(), r.ops.end(), [](const OpInfo& a, const OpInfo& b) {
      return std::tie(a.domain, a.op_type, a.since_version) <
             std::tie(b.domain, b.op_type, b.since_version);
    });
    for (size_t i = 0; i < r.ops.size(); ++i)
      r.by_key[key_of(r.ops[i].domain, r.ops[i].op_type)].push_back(i);
    return r;
  }();
  return reg;
}

}  // namespace

const OpInfo* find_op(std::string_view domain, std::string_view op_type, int64_t opset) {
  const Registry& r = registry();
  auto it = r.by_key.find(key_of(domain, op_type));
  if (it == r.by_key.end()) return nullptr;
  for (size_t i : it->second) {
    const OpInfo& op = r.ops[i];
    if (op.since_version <= opset && opset <= op.until_version) return &op;
  }
  return nullptr;
}

const OpInfo* find_op(const Node& node) {
  return find_op(node.domain(), node.op_type(), node.opset());
}

const std::vector<OpInfo>& all_ops() {
  return registry().ops;
}

bool is_view_node(const Node& node) {
  const OpInfo* op = find_op(node);
  if (op == nullptr || !op->is_view) return false;
  if (!node.is("Dropout")) return true;
  // Dropout is the identity only in inference mode.
  if (node.opset() <= 6) return node.attr_int("is_test", 0) != 0;
  const Value* training = node.input(2);
  if (training == nullptr) return true;
  const Tensor* t = training->initializer();
  if (t == nullptr && training->producer() != nullptr && training->producer()->is("Constant")) {
    Tensor c = training->producer()->attr_tensor("value");
    return !c.empty() && c.numel() == 1 && c.as_int64(0) == 0;
  }
  return t != nullptr && t->numel() == 1 && t->as_int64(0) == 0;
}

}  // namespace xopt::ir
