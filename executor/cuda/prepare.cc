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
  PreparedSession out;
  if (model.metadata(planner::kPlanMetadataKey)) {
    XOPT_ASSIGN_OR_RETURN(out.plan, planner::read_plan(model));
    out.plan_from_model = true;
    auto s = Session::create(model, out.plan, options);
    if (!s.is_ok()) return s.status().with_context(where + " (in its memory plan): ");
    out.session = std::move(s).value();
    return out;
  }
  // No plan: bind the fed shapes on a copy, infer, plan for this graph order.
  XOPT_ASSIGN_OR_RETURN(
      ir::Model copy, ir::model_from_proto(ir::model_to_proto(model), model.base_dir, model.path));
  ir::ShapeBindings bindings;
  for (const ir::Value* v : copy.graph->runtime_inputs()) {
    auto it = shapes.find(v->name());
    if (it != shapes.end()) bindings.input_shapes[v->name()] = it->second.dims();
  }
  XOPT_RETURN_IF_ERROR(ir::bind_input_shapes(*copy.graph, bindings).with_context(where + ": "));
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*copy.graph).with_context(where + ": "));
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
    const ir::Tensor& t = it->second;
    const bool shape_like =
        (t.dtype() == ir::DType::kInt64 || t.dtype() == ir::DType::kInt32) && t.numel() <= 64;
    if (!shape_like) continue;
    ir::Value* c = g.add_initializer(v->name() + "_const", t);
    g.replace_all_uses(v, c);
    g.remove_graph_input(v);
    feeds.erase(it);
  }
  XOPT_ASSIGN_OR_RETURN(PreparedSession p, prepare_session(copy, feeds, options));
  return p.session->run(feeds);
}

}  // namespace xopt::cuda
