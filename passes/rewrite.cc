#include "passes/rewrite.h"

#include <algorithm>

namespace xopt::passes {

std::optional<ir::Tensor> constant_value(const ir::Value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_constant()) return *v->initializer();
  const ir::Node* p = v->producer();
  if (p == nullptr || !p->is("Constant") || p->attributes().size() != 1) return std::nullopt;
  const onnx::AttributeProto& a = p->attributes().front();
  if (a.name() == "value") {
    ir::Tensor t = p->attr_tensor("value");
    if (t.empty()) return std::nullopt;
    return t;
  }
  if (a.name() == "value_int") return ir::Tensor::scalar<int64_t>(a.i());
  if (a.name() == "value_float") return ir::Tensor::scalar<float>(a.f());
  if (a.name() == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    return ir::Tensor::of<int64_t>({static_cast<int64_t>(v.size())}, v);
  }
  if (a.name() == "value_floats") {
    std::vector<float> v(a.floats().begin(), a.floats().end());
    return ir::Tensor::of<float>({static_cast<int64_t>(v.size())}, v);
  }
  return std::nullopt;
}

bool has_implicit_uses(const ir::Value* v) {
  return std::any_of(v->uses().begin(), v->uses().end(),
                     [](const ir::Use& u) { return u.index < 0; });
}

bool name_is_visible(const ir::Value* v) {
  return v->is_graph_output() || has_implicit_uses(v);
}

bool bypass_node(ir::Graph& graph, ir::Node* node, ir::Value* old, ir::Value* existing) {
  if (old == existing) return false;
  if (!name_is_visible(old)) {
    graph.replace_all_uses(old, existing);
    graph.remove_node(node);
    return true;
  }
  // `existing` must take over `old`'s name; only a plain intermediate result can be renamed.
  if (existing->producer() == nullptr || existing->is_graph_input() || name_is_visible(existing))
    return false;
  std::string name = release_name(graph, old);
  graph.replace_all_uses(old, existing);
  graph.remove_node(node);
  if (existing->is_graph_output() && existing->has_value_info()) graph.clear_value_info(existing);
  graph.rename_value(existing, name);
  return true;
}

std::string release_name(ir::Graph& graph, ir::Value* v) {
  std::string name = v->name();
  graph.rename_value(v, graph.unique_name(name + ".replaced"));
  return name;
}

}  // namespace xopt::passes
