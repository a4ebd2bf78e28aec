// The HTML report: one self-contained file (inline SVG, CSS and JS; nothing from the network) with
// the summary, the pass statistics, the graphs before and after (pan and zoom), the memory
// timeline and the breakdown. Clicking a node highlights its outputs in the timeline and back; on
// load the page checks that this works and writes the result into <div id="selfcheck">.
#pragma once

#include <string>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"

namespace xopt::viz {

struct ReportInputs {
  std::string heading = "xopt report";
  std::string title;                          // usually the model's file name
  const ir::Graph* before = nullptr;          // the model as given (may be null)
  const ir::Graph* after = nullptr;           // the optimized model
  const planner::MemoryPlan* plan = nullptr;  // may be null: no timeline, no breakdown
  const ir::Model* model = nullptr;  // the optimized model, for its offload schedule (may be null)
  std::string stats_json;            // passes::stats_to_json(...).dump(), may be empty
  // Name-scope clusters deeper than this are collapsed in graphs of more nodes than
  // `collapse_above` (-1: never).
  int collapse_depth = 2;
  size_t collapse_above = 1500;
};

Result<std::string> report_html(const ReportInputs& in);

}  // namespace xopt::viz
