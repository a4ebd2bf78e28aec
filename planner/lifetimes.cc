#include "planner/lifetimes.h"

#include <algorithm>

#include "planner/intervals.h"

namespace xopt::planner {

std::vector<const ir::Node*> graph_order(const ir::Graph& graph) {
  std::vector<const ir::Node*> order;
  order.reserve(graph.num_nodes());
  for (const ir::Node* n : graph.nodes()) order.push_back(n);
  return order;
}

bool lives_in_arena(const ir::Value& v, bool io_in_arena) {
  if (v.is_initializer() || !v.is_tensor()) return false;
  if (v.is_graph_input() || v.is_graph_output()) return io_in_arena;
  return v.producer() != nullptr;
}

Result<size_t> value_bytes(const ir::Value& v) {
  if (!v.is_tensor())
    return unsupported("value '" + v.name() + "' is not a tensor (sequence, map or optional): " +
                       "the planner can only place tensors");
  const auto numel = v.shape().numel();
  if (!numel)
    return invalid_argument("value '" + v.name() + "' has shape " + v.shape().to_string() +
                            ", not static: bind the symbolic dims (--input-shape, --batch) and " +
                            "infer shapes before planning");
  const size_t elem = ir::dtype_size(v.dtype());
  if (elem == 0)
    return unsupported("value '" + v.name() + "' has element type '" +
                       std::string(ir::dtype_name(v.dtype())) + "', which has no fixed size");
  return static_cast<size_t>(*numel) * elem;
}

Result<Lifetimes> compute_lifetimes(const ir::Graph& graph,
                                    const std::vector<const ir::Node*>& order,
                                    const LifetimeOptions& options) {
  Lifetimes lt;
  lt.num_steps = static_cast<int>(order.size());
  std::unordered_map<const ir::Node*, int> step;
  step.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i]->graph() != &graph)
      return invalid_argument("node order lists " + order[i]->describe() +
                              ", which is not in this graph");
    if (!step.emplace(order[i], static_cast<int>(i)).second)
      return invalid_argument("node order lists " + order[i]->describe() + " twice");
  }
  for (const ir::Node* n : graph.nodes())
    if (step.find(n) == step.end()) return invalid_argument("node order misses " + n->describe());

  auto add = [&](const ir::Value* v, int first) -> Status {
    if (!lives_in_arena(*v, options.io_in_arena) || lt.index.count(v)) return Status::ok();
    auto bytes = value_bytes(*v);
    if (!bytes.is_ok()) return bytes.status();
    Lifetime l;
    l.value = v;
    l.bytes = *bytes;
    l.size = align_up(*bytes, options.alignment);
    l.first = first;
    l.last = first;
    for (const ir::Use& u : v->uses()) {
      const int s = step.at(u.node);
      if (s < first)
        return invalid_argument("node order runs " + u.node->describe() + " (step " +
                                std::to_string(s) + ") before value '" + v->name() +
                                "' it reads is written (step " + std::to_string(first) + ")");
      l.last = std::max(l.last, s);
    }
    if (v->is_graph_output()) l.last = std::max(l.last, lt.num_steps - 1);
    lt.index.emplace(v, lt.values.size());
    lt.values.push_back(l);
    return Status::ok();
  };
  for (const ir::Value* v : graph.runtime_inputs()) XOPT_RETURN_IF_ERROR(add(v, -1));
  for (size_t i = 0; i < order.size(); ++i)
    for (const ir::Value* v : order[i]->outputs())
      if (v != nullptr)
        XOPT_RETURN_IF_ERROR(add(v, static_cast<int>(i)).with_context(order[i]->describe() + ": "));
  return lt;
}

Result<size_t> naive_bytes(const ir::Graph& graph, const LifetimeOptions& options) {
  XOPT_ASSIGN_OR_RETURN(Lifetimes lt, compute_lifetimes(graph, graph_order(graph), options));
  size_t total = 0;
  for (const Lifetime& l : lt.values) total += l.size;
  return total;
}

}  // namespace xopt::planner
