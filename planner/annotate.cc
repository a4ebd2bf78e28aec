#include "planner/annotate.h"

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
  return plan;
}

}  // namespace xopt::planner
