#include "ir/graph.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <unordered_set>

#include "ir/tensor_proto.h"
#include "ir/value_type.h"

namespace xopt::ir {

void Value::set_type(const onnx::TypeProto& t) {
  if (type_kind(t) == TypeKind::kTensor) {
    is_tensor_ = true;
    type_.Clear();
    parse_tensor_type(t, &dtype_, &shape_);
    return;
  }
  is_tensor_ = false;
  type_ = t;
  dtype_ = DType::kUndefined;
  shape_ = Shape();
  shape_data_.reset();
}

// ---- Node ----

uint64_t Node::next_serial() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

int64_t Node::opset() const {
  return graph_->opset(domain_.empty() ? "" : domain_);
}

void Node::set_input(size_t i, Value* v) {
  if (i >= inputs_.size()) inputs_.resize(i + 1, nullptr);
  if (inputs_[i] != nullptr) graph_->erase_use(inputs_[i], this, static_cast<int>(i));
  inputs_[i] = v;
  if (v != nullptr) v->uses_.push_back({this, static_cast<int>(i)});
}

void Node::set_implicit_inputs(const std::vector<Value*>& values) {
  for (size_t i = 0; i < implicit_inputs_.size(); ++i)
    graph_->erase_use(implicit_inputs_[i], this, -1 - static_cast<int>(i));
  implicit_inputs_ = values;
  for (size_t i = 0; i < implicit_inputs_.size(); ++i)
    implicit_inputs_[i]->uses_.push_back({this, -1 - static_cast<int>(i)});
}

void Node::remove_input(size_t i) {
  assert(i < inputs_.size());
  for (size_t k = i; k < inputs_.size(); ++k)
    if (inputs_[k] != nullptr) graph_->erase_use(inputs_[k], this, static_cast<int>(k));
  inputs_.erase(inputs_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t k = i; k < inputs_.size(); ++k)
    if (inputs_[k] != nullptr) inputs_[k]->uses_.push_back({this, static_cast<int>(k)});
}

void Node::replace_input(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == from) set_input(i, to);
}

const onnx::AttributeProto* Node::attr(const std::string& name) const {
  for (const auto& a : attrs_)
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t Node::attr_int(const std::string& name, int64_t dflt) const {
  const auto* a = attr(name);
  return a != nullptr ? a->i() : dflt;
}

float Node::attr_float(const std::string& name, float dflt) const {
  const auto* a = attr(name);
  return a != nullptr ? a->f() : dflt;
}

std::string Node::attr_string(const std::string& name, const std::string& dflt) const {
  const auto* a = attr(name);
  return a != nullptr ? a->s() : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& name, std::vector<int64_t> dflt) const {
  const auto* a = attr(name);
  if (a == nullptr) return dflt;
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> Node::attr_floats(const std::string& name, std::vector<float> dflt) const {
  const auto* a = attr(name);
  if (a == nullptr) return dflt;
  return {a->floats().begin(), a->floats().end()};
}

Tensor Node::attr_tensor(const std::string& name) const {
  const auto* a = attr(name);
  if (a == nullptr || !a->has_t()) return {};
  auto t = tensor_from_proto(a->t(), graph_ != nullptr ? "" : "");
  return t.is_ok() ? std::move(t).value() : Tensor();
}

namespace {
onnx::AttributeProto& upsert(std::vector<onnx::AttributeProto>& attrs, const std::string& name) {
  for (auto& a : attrs)
    if (a.name() == name) {
      a.Clear();
      a.set_name(name);
      return a;
    }
  attrs.emplace_back();
  attrs.back().set_name(name);
  return attrs.back();
}
}  // namespace

void Node::set_attr(const std::string& name, int64_t v) {
  auto& a = upsert(attrs_, name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
}
void Node::set_attr(const std::string& name, float v) {
  auto& a = upsert(attrs_, name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
}
void Node::set_attr(const std::string& name, const std::string& v) {
  auto& a = upsert(attrs_, name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
}
void Node::set_attr(const std::string& name, const std::vector<int64_t>& v) {
  auto& a = upsert(attrs_, name);
  a.set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a.add_ints(x);
}
void Node::set_attr(const std::string& name, const std::vector<float>& v) {
  auto& a = upsert(attrs_, name);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (auto x : v) a.add_floats(x);
}
void Node::set_attr(const onnx::AttributeProto& attr) {
  upsert(attrs_, attr.name()) = attr;
}

void Node::remove_attr(const std::string& name) {
  attrs_.erase(std::remove_if(attrs_.begin(), attrs_.end(),
                              [&](const onnx::AttributeProto& a) { return a.name() == name; }),
               attrs_.end());
}

void Node::add_provenance(const Node& replaced) {
  if (replaced.provenance_.empty()) {
    provenance_.push_back(replaced.name_);
  } else {
    provenance_.insert(provenance_.end(), replaced.provenance_.begin(), replaced.provenance_.end());
  }
}

std::string Node::describe() const {
  std::string op = domain_.empty() ? op_type_ : domain_ + "." + op_type_;
  std::string who = name_.empty() ? "<unnamed>" : name_;
  if (!provenance_.empty()) {
    who += " (from ";
    for (size_t i = 0; i < provenance_.size(); ++i) who += (i ? ", " : "") + provenance_[i];
    who += ")";
  }
  return "node '" + who + "' (" + op + ")";
}

// ---- Graph ----

std::vector<Node*> Graph::node_list() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::vector<Value*> Graph::initializers() const {
  std::vector<Value*> out;
  for (Value* v : initializer_order_)
    if (v->initializer_ != nullptr) out.push_back(v);
  return out;
}

std::vector<Value*> Graph::runtime_inputs() const {
  std::vector<Value*> out;
  for (Value* v : inputs_)
    if (v->initializer_ == nullptr) out.push_back(v);
  return out;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : it->second.get();
}

Value* Graph::find_node_output(const std::string& name) const {
  Value* v = find_value(name);
  return v != nullptr && v->producer_ != nullptr ? v : nullptr;
}

Node* Graph::find_node(const std::string& name) const {
  for (const auto& n : nodes_)
    if (n->name_ == name) return n.get();
  return nullptr;
}

std::string Graph::unique_name(const std::string& hint) {
  std::string base = hint.empty() ? "v" : hint;
  if (values_.find(base) == values_.end()) return base;
  for (;;) {
    std::string candidate = base + "_" + std::to_string(++name_counter_);
    if (values_.find(candidate) == values_.end()) return candidate;
  }
}

Value* Graph::get_or_create_value(const std::string& name) {
  auto& slot = values_[name];
  if (!slot) slot.reset(new Value(this, name));
  return slot.get();
}

Node* Graph::add_node(const std::string& op_type, const std::vector<Value*>& inputs,
                      const std::vector<std::string>& output_names, const std::string& domain,
                      Node* before) {
  std::unique_ptr<Node> owned(new Node(this, op_type, domain));
  Node* n = owned.get();
  auto pos = before != nullptr ? before->self_ : nodes_.end();
  n->self_ = nodes_.insert(pos, std::move(owned));
  for (Value* v : inputs) n->add_input(v);
  for (size_t i = 0; i < output_names.size(); ++i) {
    if (output_names[i].empty()) {
      n->outputs_.push_back(nullptr);
      continue;
    }
    Value* v = get_or_create_value(unique_name(output_names[i]));
    v->kind_ = ValueKind::kActivation;
    v->producer_ = n;
    v->producer_index_ = static_cast<int>(i);
    n->outputs_.push_back(v);
  }
  return n;
}

// From the back: removing the readers of a value last-first (dead-code elimination, CSE) then
// costs O(1) each instead of O(readers).
void Graph::erase_use(Value* v, Node* n, int index) {
  auto& u = v->uses_;
  auto it = std::find(u.rbegin(), u.rend(), Use{n, index});
  if (it != u.rend()) u.erase(std::next(it).base());
}

void Graph::remove_node(Node* n) {
  for (size_t i = 0; i < n->inputs_.size(); ++i)
    if (n->inputs_[i] != nullptr) erase_use(n->inputs_[i], n, static_cast<int>(i));
  for (size_t i = 0; i < n->implicit_inputs_.size(); ++i)
    erase_use(n->implicit_inputs_[i], n, -1 - static_cast<int>(i));
  for (Value* out : n->outputs_) {
    if (out == nullptr) continue;
    assert(out->uses_.empty() && !out->is_graph_output_);
    // Only values with an entry are listed: the scan would make removing n nodes O(n^2).
    if (out->has_value_info_)
      value_info_.erase(std::remove(value_info_.begin(), value_info_.end(), out),
                        value_info_.end());
    values_.erase(out->name_);
  }
  nodes_.erase(n->self_);
}

void Graph::move_node(Node* n, Node* before) {
  auto pos = before != nullptr ? before->self_ : nodes_.end();
  nodes_.splice(pos, nodes_, n->self_);
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) {
    if (u.index >= 0) {
      u.node->set_input(static_cast<size_t>(u.index), to);
    } else {
      auto k = static_cast<size_t>(-1 - u.index);
      erase_use(from, u.node, u.index);
      u.node->implicit_inputs_[k] = to;
      to->uses_.push_back(u);
    }
  }
  if (from->is_graph_output_) {
    if (!to->is_graph_output_) to->output_info_ = from->output_info_;
    for (auto& o : outputs_)
      if (o == from) o = to;
    from->is_graph_output_ = false;
    to->is_graph_output_ = true;
  }
}

bool Graph::rename_value(Value* v, const std::string& name) {
  if (v->name_ == name) return true;
  if (values_.count(name)) return false;
  auto node = values_.extract(v->name_);
  node.key() = name;
  values_.insert(std::move(node));
  v->name_ = name;
  if (v->sparse_) v->sparse_->mutable_values()->set_name(name);
  return true;
}

Value* Graph::add_initializer(const std::string& name_hint, Tensor t) {
  Value* v = get_or_create_value(unique_name(name_hint));
  v->kind_ = ValueKind::kInitializer;
  v->dtype_ = t.dtype();
  v->shape_ = t.shape();
  v->initializer_ = std::make_shared<Tensor>(std::move(t));
  initializer_order_.push_back(v);
  return v;
}

void Graph::remove_initializer(Value* v) {
  assert(v->uses_.empty());
  initializer_order_.erase(std::remove(initializer_order_.begin(), initializer_order_.end(), v),
                           initializer_order_.end());
  if (v->is_graph_input_) remove_graph_input(v);
  if (v->has_value_info_)
    value_info_.erase(std::remove(value_info_.begin(), value_info_.end(), v), value_info_.end());
  values_.erase(v->name_);
}

void Graph::remove_graph_input(Value* v) {
  inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), v), inputs_.end());
  v->is_graph_input_ = false;
  if (v->initializer_ == nullptr && v->uses_.empty() && !v->is_graph_output_)
    values_.erase(v->name_);
}

void Graph::set_outputs(std::vector<Value*> outputs) {
  for (Value* v : outputs_) v->is_graph_output_ = false;
  outputs_ = std::move(outputs);
  for (Value* v : outputs_) v->is_graph_output_ = true;
}

void Graph::add_input(Value* v) {
  if (v->kind_ == ValueKind::kUndefined) v->kind_ = ValueKind::kInput;
  v->is_graph_input_ = true;
  inputs_.push_back(v);
}

void Graph::clear_value_info(Value* v) {
  value_info_.erase(std::remove(value_info_.begin(), value_info_.end(), v), value_info_.end());
  v->has_value_info_ = false;
}

bool Graph::topo_sort(std::string* error) {
  // Kahn's algorithm, picking ready nodes in their current order so a sorted graph is unchanged.
  std::unordered_map<Node*, size_t> pending;
  std::unordered_map<Node*, size_t> position;
  size_t pos = 0;
  for (const auto& n : nodes_) position[n.get()] = pos++;
  auto deps_of = [](Node* n) {
    std::vector<Node*> deps;
    for (Value* v : n->inputs_)
      if (v != nullptr && v->producer_ != nullptr) deps.push_back(v->producer_);
    for (Value* v : n->implicit_inputs_)
      if (v->producer_ != nullptr) deps.push_back(v->producer_);
    return deps;
  };
  std::unordered_map<Node*, std::vector<Node*>> users;
  for (const auto& n : nodes_) {
    auto deps = deps_of(n.get());
    pending[n.get()] = deps.size();
    for (Node* d : deps) users[d].push_back(n.get());
  }
  auto cmp = [&](Node* a, Node* b) { return position[a] > position[b]; };
  std::vector<Node*> heap;
  for (const auto& n : nodes_)
    if (pending[n.get()] == 0) heap.push_back(n.get());
  std::make_heap(heap.begin(), heap.end(), cmp);
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    Node* n = heap.back();
    heap.pop_back();
    order.push_back(n);
    for (Node* u : users[n])
      if (--pending[u] == 0) {
        heap.push_back(u);
        std::push_heap(heap.begin(), heap.end(), cmp);
      }
  }
  if (order.size() != nodes_.size()) {
    if (error != nullptr) {
      for (const auto& n : nodes_)
        if (pending[n.get()] != 0) {
          *error = "graph has a cycle through " + n->describe();
          break;
        }
    }
    return false;
  }
  for (Node* n : order) nodes_.splice(nodes_.end(), nodes_, n->self_);
  return true;
}

int64_t Graph::opset(const std::string& domain) const {
  const std::string& d = (domain == "ai.onnx") ? std::string() : domain;
  for (const auto& [dom, ver] : opsets_)
    if (dom == d || (d.empty() && dom == "ai.onnx")) return ver;
  return 0;
}

void Graph::require_opset(const std::string& domain, int64_t version) {
  for (auto& [dom, ver] : opsets_) {
    if (dom != domain && !(domain.empty() && dom == "ai.onnx")) continue;
    ver = std::max(ver, version);
    return;
  }
  opsets_.emplace_back(domain, version);
}

// ---- Model ----

std::optional<std::string> Model::metadata(const std::string& key) const {
  for (const auto& p : shell.metadata_props())
    if (p.key() == key) return p.value();
  return std::nullopt;
}

void Model::set_metadata(const std::string& key, const std::string& value) {
  for (auto& p : *shell.mutable_metadata_props())
    if (p.key() == key) {
      p.set_value(value);
      return;
    }
  auto* p = shell.add_metadata_props();
  p->set_key(key);
  p->set_value(value);
}

}  // namespace xopt::ir
