#include "passes/subgraphs.h"

#include <string>

#include "ir/shape_inference.h"
#include "ir/subgraph.h"
#include "passes/pass_registry.h"

namespace xopt::passes {

namespace {

// True when the subgraph's shape inference succeeds.
bool infers(const ir::Node& n, const onnx::GraphProto& g) {
  Result<ir::Subgraph> probe = ir::load_subgraph(n, g);
  return probe.is_ok() && ir::infer_shapes(*probe->model.graph).is_ok();
}

// The declared shapes of g's outputs and of every nested subgraph's outputs, cleared (element
// types kept).
void clear_output_shapes(onnx::GraphProto* g) {
  for (auto& o : *g->mutable_output())
    if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  for (auto& node : *g->mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) clear_output_shapes(a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) clear_output_shapes(&sub);
    }
}

// When the subgraph's shape inference fails because a node contradicts the declared rank of an
// output of it or of a subgraph nested in it, replaces *sg by a load of the subgraph with those
// output shapes cleared, on which inference succeeds. False (sg untouched) otherwise.
Result<bool> relax_contradicted_outputs(const ir::Node& n, const onnx::GraphProto& g,
                                        ir::Subgraph* sg) {
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph probe, ir::load_subgraph(n, g));
  if (ir::infer_shapes(*probe.model.graph).is_ok()) return false;
  onnx::GraphProto cleared = g;
  clear_output_shapes(&cleared);
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph relaxed, ir::load_subgraph(n, cleared));
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
        // A branch whose shapes contradict themselves under the bound input shapes is a branch
        // those shapes never take (silero_vad's LSTM on a rank-4 input, which onnxruntime's own
        // inference refuses too once the inputs are fixed): the pass leaves it as it is, and the
        // executor still checks whatever runs.
        if (!c.is_ok() && !relaxed && !infers(*n, a.g())) continue;
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
