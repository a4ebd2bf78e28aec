// The memory breakdown as stacked bars: one bar per model (or batch), four buckets each (CUDA
// context, hatched when it is an estimate; parameters; activations; workspace).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"

namespace xopt::viz {

struct BreakdownBar {
  std::string label;  // "resnet18.opt.onnx", "batch 8"
  planner::Breakdown breakdown;
};

// The bar of a model carrying a plan.
Result<BreakdownBar> breakdown_bar(const ir::Model& m, const std::string& label);
// One bar per batch: the model planned again at each (planner::plan_at_batch with the stored
// plan's alignment and I/O placement; a static leading dim is rebound too), the CUDA context taken
// from the stored plan (measured or estimated).
Result<std::vector<BreakdownBar>> breakdown_sweep(const ir::Model& m, const std::string& label,
                                                  const std::vector<int64_t>& batches);
std::string breakdown_svg(const std::vector<BreakdownBar>& bars, const std::string& title = "");
// SVG, or an HTML page when `out_path` ends in .html.
Result<std::string> breakdown_file(const std::vector<BreakdownBar>& bars,
                                   const std::string& out_path);

}  // namespace xopt::viz
