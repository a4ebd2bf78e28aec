#include "planner/annotate.h"

#include "planner/planner.h"

namespace xopt::planner {

void write_plan(ir::Model& model, const MemoryPlan& plan) {
  model.set_metadata(kPlanMetadataKey, plan_to_json(plan));
}

Result<MemoryPlan> read_plan(const ir::Model& model) {
  const auto text = model.metadata(kPlanMetadataKey);
  const std::string where = model.path.empty() ? "model" : model.path;
  if (!text)
    return invalid_argument(where + ": has no '" + std::string(kPlanMetadataKey) +
                            "' metadata (run the plan pass first)");
  auto plan = plan_from_json(*text);
  if (!plan.is_ok()) return plan.status().with_context(where + ": ");
  // A plan stored before the breakdown had its I/O bucket: the graph says what it is.
  if (plan->breakdown.io == 0 && model.graph != nullptr)
    plan->breakdown.io = io_region_bytes(*model.graph, *plan);
  return plan;
}

}  // namespace xopt::planner
