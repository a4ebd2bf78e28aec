#include "passes/subgraphs.h"

#include <string>

#include "ir/shape_inference.h"
#include "ir/subgraph.h"
#include "passes/pass_registry.h"

namespace xopt::passes {

namespace {

// When the subgraph's shape inference fails only because a node contradicts the declared rank or
// type of a subgraph output, replaces *sg by a fresh load whose outputs declare nothing but their
// inferred type, on which inference succeeds. False (sg untouched) otherwise.
Result<bool> relax_contradicted_outputs(const ir::Node& n, const onnx::GraphProto& g,
                                        ir::Subgraph* sg) {
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph probe, ir::load_subgraph(n, g));
  if (ir::infer_shapes(*probe.model.graph).is_ok()) return false;
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph relaxed, ir::load_subgraph(n, g));
  for (ir::Value* v : relaxed.model.graph->outputs())
    if (v->is_tensor()) {
      v->set_shape(ir::Shape());
      v->set_dtype(ir::DType::kUndefined);
    }
  if (!ir::infer_shapes(*relaxed.model.graph).is_ok()) return false;
  *sg = std::move(relaxed);
  return true;
}

Result<bool> run_in_graph(Pass& pass, ir::Graph& g, PassContext& ctx) {
  bool changed = false;
  for (ir::Node* n : g.node_list()) {
    bool node_changed = false;
    for (auto& a : n->mutable_attributes()) {
      if (!a.has_g()) continue;
      XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg, ir::load_subgraph(*n, a.g()));
      // Shape bindings name the top-level inputs; a subgraph's own inputs keep their declarations.
      PassOptions options = ctx.options();
      options.shape_bindings = {};
      options.shape_ranges.clear();
      PassContext sub(options);
      Result<bool> c = pass.run(sg.model, sub);
      if (!c.is_ok()) {
        // Exporters declare a branch's outputs from the one path they traced: the branch not
        // taken may compute another rank (silero_vad's 8 kHz LSTM branch). The subgraph then
        // runs again from its attribute, its outputs left to inference.
        XOPT_ASSIGN_OR_RETURN(bool relaxed, relax_contradicted_outputs(*n, a.g(), &sg));
        if (relaxed) {
          sub = PassContext(options);
          c = pass.run(sg.model, sub);
        }
      }
      if (!c.is_ok()) return c.status().with_context(n->describe() + ": in " + a.name() + ": ");
      XOPT_ASSIGN_OR_RETURN(bool nested, run_in_graph(pass, *sg.model.graph, sub));
      for (const auto& [counter, count] : sub.counters()) ctx.count(counter, count);
      if (!*c && !nested) continue;
      // A fusion may have imported a domain (com.microsoft) into the subgraph's model: the
      // enclosing model must import it, since a subgraph has no opset imports of its own.
      for (const auto& [domain, version] : sg.model.graph->opset_imports())
        g.require_opset(domain, version);
      *a.mutable_g() = ir::subgraph_to_proto(sg);
      node_changed = true;
    }
    if (!node_changed) continue;
    ir::refresh_implicit_inputs(*n);
    changed = true;
  }
  return changed;
}

}  // namespace

bool runs_in_subgraphs(std::string_view pass_name) {
  const PassInfo* info = PassRegistry::global().find_pass(pass_name);
  if (info == nullptr) return false;
  for (const GroupMembership& m : info->groups)
    if (m.group == "plan") return false;
  return !info->groups.empty();
}

Result<bool> run_in_subgraphs(Pass& pass, ir::Model& model, PassContext& ctx) {
  return run_in_graph(pass, *model.graph, ctx);
}

}  // namespace xopt::passes
