// The pipeline library's bindings (optimize, the pass registry) in the module xopt._xopt.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "planner/memory_plan.h"
#include "planner/offload.h"

namespace xopt::python {

void bind_pipeline(nanobind::module_& m);

// The plan's JSON document (planner::plan_to_json) with the breakdown xopt prints beside it as
// "memory_breakdown" (planner/memory_breakdown.h: `offload`, may be null, moves weights to the
// host): what xopt.plan_info and an Outcome's plan are read from.
std::string plan_document(const planner::MemoryPlan& plan, const planner::OffloadPlan* offload);

}  // namespace xopt::python
