// Runs a model on the CPU with the reference kernels.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "planner/memory_plan.h"

namespace xopt::exec {

struct RunOptions {
  // When set, every planned activation lives in one arena at the plan's offsets. The plan is checked
  // (check_plan) before anything runs, and a kernel output whose size disagrees with it is an error.
  const planner::MemoryPlan* plan = nullptr;
};

// Named inputs in, graph outputs out (in graph output order). Errors name the missing input, the input
// of the wrong shape or dtype, or the node whose op has no kernel.
Result<std::vector<ir::Tensor>> run_model(const ir::Model& model,
                                          const std::map<std::string, ir::Tensor>& inputs,
                                          const RunOptions& options = {});

}  // namespace xopt::exec
