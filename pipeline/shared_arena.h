// Several models planned to run one at a time on one GPU in one shared activation arena and
// workspace (`xopt --shared-arena a.onnx b.onnx`): each is optimized and planned on its own
// (pipeline::optimize, its output beside it), then the group is recorded in every output and the
// shared figures computed next to the separate ones (planner/shared_arena.h). Members are named as
// the user gave them (each path as given, or a --name per model); the group's id comes from the
// plans, so it is the same from any working folder.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "pipeline/pipeline.h"
#include "pipeline/request.h"
#include "planner/memory_breakdown.h"
#include "planner/memory_plan.h"
#include "planner/shared_arena.h"

namespace xopt::pipeline {

// The output of each model (<stem>.opt.onnx beside it), or why the group cannot be planned: fewer
// than two models, one output named for all, a --max-batch search, no plan group in the passes,
// two models whose outputs are one file, `names` (--name; may be empty) not one per model.
Result<std::vector<std::string>> shared_arena_outputs(const Request& each,
                                                      const std::vector<std::string>& models,
                                                      const std::vector<std::string>& names = {});

struct SharedArenaOutcome {
  std::vector<std::string> names;  // each member's name: as given (--name), else its path as given
  std::vector<std::string> outputs;  // parallel to names
  std::vector<planner::MemoryPlan> plans;
  std::vector<planner::MemoryBreakdown> breakdowns;  // each member's, its offload schedule included
  planner::SharedArena shared;
  planner::SharedArenaFigures figures;
  std::string text;                  // the table (planner::shared_arena_text)
  std::string report_json;           // the xopt.shared_arena_report document
  std::vector<std::string> written;  // report files written (DIR/shared_arena.json, .html)
};

// After each model was optimized and planned alone into outputs[i] (parallel to `models`, and
// `names` when given; empty: each member is named by its path as given): the group's record is
// added to every output file (its external data untouched), and with `report_dir`
// DIR/shared_arena.json and DIR/shared_arena.html (separate vs shared bars) written.
Result<SharedArenaOutcome> share_arena_files(const std::vector<std::string>& models,
                                             const std::vector<std::string>& names,
                                             const std::vector<std::string>& outputs,
                                             const std::string& report_dir);

}  // namespace xopt::pipeline
