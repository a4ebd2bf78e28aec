// Plan annotations: the plan travels inside the model as metadata_props["xopt.memory_plan"] (the
// versioned JSON of memory_plan.h), so xviz and the executors read it back from the saved model.
#pragma once

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"

namespace xopt::planner {

inline constexpr const char* kPlanMetadataKey = "xopt.memory_plan";

void write_plan(ir::Model& model, const MemoryPlan& plan);
// Errors when the model carries no plan, or one this xopt cannot read.
Result<MemoryPlan> read_plan(const ir::Model& model);

}  // namespace xopt::planner
