// What `xopt --report DIR` and `xopt --dot DIR` write besides report.json: report.html, and the
// graphs before and after as .dot and .svg. One call, so that the xopt front end stays thin.
#pragma once

#include <string>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "planner/memory_plan.h"

namespace xopt::viz {

struct VisualsRequest {
  std::string original_path;  // the model as given (read again: the passes changed it)
  const ir::Model* optimized = nullptr;
  const planner::MemoryPlan* plan = nullptr;  // may be null
  std::string stats_json;                     // may be empty
  ir::ShapeBindings bindings;                 // as given to xopt, for the original's shapes
  std::string report_dir;                     // report.html here (empty: none)
  std::string dot_dir;                        // before/after .dot and .svg here (empty: none)
};

Status write_visuals(const VisualsRequest& r);

}  // namespace xopt::viz
