// If(cond) with a constant cond  ==>  the nodes of the branch it takes, reading the outer values it
// named and the branch's initializers, in the If's place.
//
// Exporters guard shape-dependent paths with an If that folding resolves (a sample-rate switch, a
// "batch == 1" test); once the branch is inlined the rest of the pipeline (folding, fusion,
// planning) sees its nodes like any others.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/subgraph.h"
#include "passes/fold/node_traits.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

class InlineConstantIf final : public Pass {
 public:
  static constexpr std::string_view kName = "inline-constant-if";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    for (ir::Node* n : g.node_list()) {
      if (!n->is("If")) continue;
      std::optional<ir::Tensor> cond = constant_value(n->input(0));
      if (!cond || cond->numel() != 1 || cond->dtype() == ir::DType::kString) continue;
      XOPT_ASSIGN_OR_RETURN(bool done, inline_branch(g, n, cond->as_int64(0) != 0));
      if (!done) continue;
      ctx.count("ifs");
      changed = true;
    }
    return changed;
  }

 private:
  static Result<bool> inline_branch(ir::Graph& g, ir::Node* n, bool cond) {
    XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg,
                          ir::load_subgraph(*n, cond ? "then_branch" : "else_branch"));
    const ir::Graph& b = *sg.model.graph;
    if (sg.num_formal_inputs != 0 || b.outputs().size() != n->num_outputs()) return false;
    std::unordered_map<const ir::Value*, ir::Value*> map;
    for (size_t i = sg.num_formal_inputs; i < b.inputs().size(); ++i) {
      ir::Value* outer = g.find_value(b.inputs()[i]->name());
      if (outer == nullptr) return false;
      map[b.inputs()[i]] = outer;
    }
    // Nested subgraphs read branch values by name: those names must survive the move unchanged.
    for (const ir::Node* bn : b.nodes())
      for (const ir::Value* v : bn->implicit_inputs())
        if (!map.count(v) && g.find_value(v->name()) != nullptr) return false;

    for (const ir::Value* v : b.initializers()) {
      if (v->sparse_initializer() != nullptr) return false;
      map[v] = g.add_initializer(v->name(), *v->initializer());
    }
    for (const ir::Node* bn : b.nodes()) {
      std::vector<ir::Value*> ins;
      for (const ir::Value* v : bn->inputs()) {
        if (v == nullptr) {
          ins.push_back(nullptr);
          continue;
        }
        auto it = map.find(v);
        if (it == map.end())
          return internal_error(n->describe() + ": branch value '" + v->name() +
                                "' is read before it is defined");
        ins.push_back(it->second);
      }
      std::vector<std::string> names;
      for (const ir::Value* v : bn->outputs()) names.push_back(v != nullptr ? v->name() : "");
      ir::Node* nn = g.add_node(bn->op_type(), ins, names, bn->domain(), n);
      nn->set_name(bn->name().empty() ? "" : g.unique_name(bn->name()));
      for (const auto& a : bn->attributes()) nn->set_attr(a);
      nn->add_provenance(*n);
      for (size_t k = 0; k < bn->num_outputs(); ++k)
        if (bn->output(k) != nullptr) map[bn->output(k)] = nn->output(k);
      if (has_subgraph(*nn)) ir::refresh_implicit_inputs(*nn);
    }
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      ir::Value* o = n->output(i);
      if (o == nullptr) continue;
      ir::Value* target = map.at(b.outputs()[i]);
      if (name_is_visible(o)) {
        // The outside world knows this value by name: an Identity keeps it (no-op elimination
        // removes it where it can).
        std::string name = release_name(g, o);
        ir::Node* id = g.add_node("Identity", {target}, {name}, "", n);
        id->add_provenance(*n);
        target = id->output(0);
      }
      g.replace_all_uses(o, target);
    }
    g.remove_node(n);
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(InlineConstantIf, "replaces an If whose condition is constant by its branch",
                   {{"fold", 90}});

}  // namespace xopt::passes
