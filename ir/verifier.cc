#include "ir/verifier.h"

#include <algorithm>
#include <unordered_set>

namespace xopt::ir {

namespace {
bool defined_outside_nodes(const Value* v) {
  return v->is_graph_input() || v->is_initializer() || v->sparse_initializer() != nullptr;
}
}  // namespace

Status verify(const Graph& graph) {
  std::unordered_set<const Value*> available;
  for (const Value* v : graph.inputs()) available.insert(v);
  for (const Value* v : graph.initializers()) {
    available.insert(v);
    const Tensor* t = v->initializer();
    if (v->dtype() != DType::kUndefined && v->dtype() != t->dtype())
      return invalid_model("initializer '" + v->name() + "' is declared " +
                           std::string(dtype_name(v->dtype())) + " but holds " +
                           std::string(dtype_name(t->dtype())));
  }
  std::unordered_set<const Node*> seen;
  for (const Node* n : graph.nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      if (v == nullptr) continue;
      if (std::find(v->uses().begin(), v->uses().end(), Use{const_cast<Node*>(n), static_cast<int>(i)}) ==
          v->uses().end())
        return internal_error(n->describe() + ": use list of '" + v->name() + "' is out of date");
      if (available.count(v)) continue;
      if (v->producer() == nullptr && !defined_outside_nodes(v))
        return invalid_model(n->describe() + " reads '" + v->name() +
                             "', which no node produces and is neither a graph input nor an initializer");
      if (v->producer() != nullptr)
        return invalid_model(n->describe() + " reads '" + v->name() + "' before " +
                             v->producer()->describe() + " produces it (not in topological order, or a cycle)");
    }
    for (const Value* v : n->implicit_inputs()) {
      if (!available.count(v) && v->producer() == nullptr && !defined_outside_nodes(v))
        return invalid_model(n->describe() + ": a subgraph reads '" + v->name() + "', which is not defined");
    }
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Value* v = n->output(i);
      if (v == nullptr) continue;
      if (v->producer() != n || v->producer_index() != static_cast<int>(i))
        return invalid_model("value '" + v->name() + "' is written by more than one node (" +
                             n->describe() + ")");
      if (!available.insert(v).second)
        return invalid_model("value '" + v->name() + "' is defined twice (" + n->describe() + ")");
    }
    seen.insert(n);
  }
  for (const Value* v : graph.outputs()) {
    if (!available.count(v)) return invalid_model("graph output '" + v->name() + "' is never produced");
  }
  return Status::ok();
}

}  // namespace xopt::ir
