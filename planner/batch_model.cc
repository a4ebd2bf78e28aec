// Rebinding a model's batch dim and planning it: the model side of the batch search (batch.cc stays
// a pure search over a callback).
#include <memory>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "planner/batch.h"

namespace xopt::planner {

Status rebind_batch(ir::Graph& g, int64_t batch, bool override_static) {
  if (batch < 1) return invalid_argument("batch must be at least 1, not " + std::to_string(batch));
  for (ir::Value* v : g.runtime_inputs()) {
    if (!v->shape().has_rank() || v->shape().rank() == 0) continue;
    if (v->shape()[0].is_known() && !override_static) continue;
    ir::Shape s = v->shape();
    s[0] = ir::Dim::symbolic("xopt.batch");
    v->set_shape(std::move(s));
  }
  ir::ShapeBindings bindings;
  bindings.batch = batch;
  XOPT_RETURN_IF_ERROR(ir::bind_input_shapes(g, bindings));
  for (ir::Node* n : g.nodes())
    for (ir::Value* v : n->outputs())
      if (v != nullptr) v->set_shape(ir::Shape());
  return ir::infer_shapes(g);
}

namespace {

Result<MemoryPlan> plan_copy_at(ir::Model& copy, int64_t batch, PlanOptions options,
                                bool override_static) {
  XOPT_RETURN_IF_ERROR(rebind_batch(*copy.graph, batch, override_static));
  options.batch = batch;
  return plan(*copy.graph, options);
}

Result<ir::Model> copy_model(const ir::Model& model) {
  return ir::model_from_proto(ir::model_to_proto(model), model.base_dir, model.path);
}

}  // namespace

Result<MemoryPlan> plan_at_batch(const ir::Model& model, int64_t batch, const PlanOptions& options,
                                 bool override_static) {
  if (batch < 1) return invalid_argument("batch must be at least 1, not " + std::to_string(batch));
  XOPT_ASSIGN_OR_RETURN(ir::Model copy, copy_model(model));
  return plan_copy_at(copy, batch, options, override_static);
}

PlanAtBatch batch_planner(const ir::Model& model, const PlanOptions& options,
                          bool override_static) {
  auto copy = std::make_shared<Result<ir::Model>>(copy_model(model));
  return [copy, options, override_static](int64_t batch) -> Result<MemoryPlan> {
    if (!copy->is_ok()) return copy->status();
    return plan_copy_at(**copy, batch, options, override_static);
  };
}

}  // namespace xopt::planner
