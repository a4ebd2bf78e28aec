// The plan as readable text, one value per line, for golden tests and debugging:
//
//   plan: arena=1024 lower_bound=1024 naive=1536 strategy=greedy-by-size align=256 optimal
//   order: conv relu pool
//   value        offset  size  bytes  steps  alias
//   x                 0   256    200  -1..0
//   y               256   512    400   0..2
//   y2              256   512    400   1..2  in-place y
#pragma once

#include <string>

#include "planner/memory_plan.h"

namespace xopt::planner {

std::string plan_to_text(const MemoryPlan& plan);

}  // namespace xopt::planner
