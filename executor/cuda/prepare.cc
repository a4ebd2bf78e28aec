#include "executor/cuda/prepare.h"

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "planner/annotate.h"
#include "planner/planner.h"

namespace xopt::cuda {

Result<PreparedSession> prepare_session(const ir::Model& model,
                                        const std::map<std::string, ir::Tensor>& shapes,
                                        const SessionOptions& options) {
  const std::string where = model.path.empty() ? std::string("model") : model.path;
  XOPT_RETURN_IF_ERROR(check_kernels(*model.graph).with_context(where + ": "));
  PreparedSession out;
  const bool planned = model.metadata(planner::kPlanMetadataKey).has_value();
  if (planned && ir::values_with_unknown_shape(*model.graph).empty()) {
    XOPT_ASSIGN_OR_RETURN(out.plan, planner::read_plan(model));
    out.plan_from_model = true;
    auto s = Session::create(model, out.plan, options);
    if (!s.is_ok()) return s.status().with_context(where + " (in its memory plan): ");
    out.session = std::move(s).value();
    return out;
  }
  // Shapes to infer (a saved model carries none for its intermediate values) and, without a plan,
  // one to make: on a copy, with the fed shapes bound.
  XOPT_ASSIGN_OR_RETURN(
      ir::Model copy, ir::model_from_proto(ir::model_to_proto(model), model.base_dir, model.path));
  ir::ShapeBindings bindings;
  for (const ir::Value* v : copy.graph->runtime_inputs()) {
    auto it = shapes.find(v->name());
    if (it != shapes.end()) bindings.input_shapes[v->name()] = it->second.dims();
  }
  XOPT_RETURN_IF_ERROR(ir::bind_input_shapes(*copy.graph, bindings).with_context(where + ": "));
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*copy.graph).with_context(where + ": "));
  if (planned) {
    XOPT_ASSIGN_OR_RETURN(out.plan, planner::read_plan(copy));
    out.plan_from_model = true;
    auto s = Session::create(copy, out.plan, options);
    if (!s.is_ok()) return s.status().with_context(where + " (in its memory plan): ");
    out.session = std::move(s).value();
    return out;
  }
  if (auto unknown = ir::values_with_unknown_shape(*copy.graph); !unknown.empty())
    return unsupported(where + ": the CUDA executor needs static shapes, and '" +
                       unknown.front()->name() + "' has " + unknown.front()->shape().to_string() +
                       " for these inputs (a data-dependent shape)");
  auto plan = planner::plan(*copy.graph);
  if (!plan.is_ok()) return plan.status().with_context(where + ": ");
  out.plan = std::move(plan).value();
  auto s = Session::create(copy, out.plan, options);
  if (!s.is_ok()) return s.status().with_context(where + ": ");
  out.session = std::move(s).value();
  return out;
}

Result<std::vector<ir::Tensor>> run_once(const ir::Model& model,
                                         const std::map<std::string, ir::Tensor>& inputs,
                                         const SessionOptions& options,
                                         bool specialize_shape_inputs) {
  std::map<std::string, ir::Tensor> feeds = inputs;
  if (!specialize_shape_inputs) {
    XOPT_ASSIGN_OR_RETURN(PreparedSession p, prepare_session(model, feeds, options));
    return p.session->run(feeds);
  }
  XOPT_ASSIGN_OR_RETURN(
      ir::Model copy, ir::model_from_proto(ir::model_to_proto(model), model.base_dir, model.path));
  ir::Graph& g = *copy.graph;
  for (ir::Value* v : g.runtime_inputs()) {
    auto it = feeds.find(v->name());
    if (it == feeds.end()) continue;
    // A small tensor read only as a node's second or later input: shapes, axes, pads, bounds,
    // scales, a pad value, a training-mode flag.
    const ir::Tensor& t = it->second;
    bool parameter_like = t.numel() <= 64 && t.dtype() != ir::DType::kString && v->has_uses();
    for (const ir::Use& u : v->uses()) parameter_like = parameter_like && u.index >= 1;
    if (!parameter_like) continue;
    ir::Value* c = g.add_initializer(v->name() + "_const", t);
    g.replace_all_uses(v, c);
    g.remove_graph_input(v);
    feeds.erase(it);
  }
  XOPT_ASSIGN_OR_RETURN(PreparedSession p, prepare_session(copy, feeds, options));
  return p.session->run(feeds);
}

}  // namespace xopt::cuda
