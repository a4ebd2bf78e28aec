// y = Op(...) with y unread and not a graph output  ==>  (nothing); same for unused initializers.
//
// Also drops value_info entries naming values that no longer exist. Initializers that are graph
// inputs stay (the model's interface), and reads from inside subgraphs count as uses.
#include <vector>

#include "passes/pass_registry.h"

namespace xopt::passes {
namespace {

bool is_dead(const ir::Node* n) {
  for (const ir::Value* v : n->outputs())
    if (v != nullptr && (v->has_uses() || v->is_graph_output())) return false;
  return true;
}

class EliminateDeadCode final : public Pass {
 public:
  static constexpr std::string_view kName = "eliminate-dead-code";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    // Walking backwards sees every reader before its producer, so a dead chain goes in one sweep.
    // Uses include implicit reads from subgraphs, so outer values an If/Loop body reads stay.
    std::vector<ir::Node*> nodes = g.node_list();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      if (!is_dead(*it)) continue;
      g.remove_node(*it);
      changed = true;
    }
    // An initializer that is also a graph input is part of the model's interface (an overridable
    // default in IR < 4) and stays.
    for (ir::Value* v : g.initializers()) {
      if (v->has_uses() || v->is_graph_output() || v->is_graph_input()) continue;
      g.remove_initializer(v);
      ctx.count("initializers");
      changed = true;
    }
    // value_info naming a value nothing defines any more (its producer went, or it never existed).
    std::vector<ir::Value*> described = g.value_info();
    for (ir::Value* v : described) {
      if (v->producer() != nullptr || v->has_uses() || v->is_graph_input() || v->is_initializer() ||
          v->sparse_initializer() != nullptr)
        continue;
      g.clear_value_info(v);
      ctx.count("value-info");
      changed = true;
    }
    return changed;
  }
};

}  // namespace

XOPT_REGISTER_PASS(EliminateDeadCode,
                   "removes nodes, initializers and value_info entries that nothing reads",
                   {{"cleanup", 90}, {"fold", 99}});

}  // namespace xopt::passes
