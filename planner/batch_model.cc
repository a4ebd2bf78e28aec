// Rebinding a model's batch dim and planning it: the model side of the batch search (batch.cc stays
// a pure search over a callback).
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "planner/batch.h"

namespace xopt::planner {

Result<MemoryPlan> plan_at_batch(const ir::Model& model, int64_t batch, const PlanOptions& options,
                                 bool override_static) {
  if (batch < 1) return invalid_argument("batch must be at least 1, not " + std::to_string(batch));
  XOPT_ASSIGN_OR_RETURN(
      ir::Model copy, ir::model_from_proto(ir::model_to_proto(model), model.base_dir, model.path));
  ir::Graph& g = *copy.graph;
  if (override_static) {
    for (ir::Value* v : g.runtime_inputs()) {
      if (!v->shape().has_rank() || v->shape().rank() == 0 || !v->shape()[0].is_known()) continue;
      ir::Shape s = v->shape();
      s[0] = ir::Dim::symbolic("xopt.batch");
      v->set_shape(std::move(s));
    }
  }
  ir::ShapeBindings bindings;
  bindings.batch = batch;
  XOPT_RETURN_IF_ERROR(ir::bind_input_shapes(g, bindings));
  // Shapes the copy carries from the original batch would survive where inference cannot tell a
  // dim: start the intermediate values from nothing.
  for (ir::Node* n : g.nodes())
    for (ir::Value* v : n->outputs())
      if (v != nullptr) v->set_shape(ir::Shape());
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(g));
  PlanOptions at = options;
  at.batch = batch;
  return plan(g, at);
}

PlanAtBatch batch_planner(const ir::Model& model, PlanOptions options, bool override_static) {
  return [&model, options, override_static](int64_t batch) {
    return plan_at_batch(model, batch, options, override_static);
  };
}

}  // namespace xopt::planner
