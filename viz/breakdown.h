// The memory breakdown (planner/memory_breakdown.h) as stacked bars: one bar per model (or batch),
// its device buckets (CUDA context, hatched when it is an estimate; resident parameters;
// activations; workspace; I/O; offload staging) and, after a gap, the host bucket (offloaded
// weights in pinned host memory).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_breakdown.h"
#include "planner/memory_plan.h"
#include "planner/shared_arena.h"

namespace xopt::viz {

struct BreakdownBar {
  std::string label;  // "resnet18.opt.onnx", "batch 8"
  planner::MemoryBreakdown breakdown;
};

// The bar of a model carrying a plan (and its offload schedule, when it has one).
Result<BreakdownBar> breakdown_bar(const ir::Model& m, const std::string& label);
// Models that share one activation arena (all carrying the same xopt.shared_arena record): two
// bars, each model on its own summed ("separate": a context, an arena and a workspace each) and
// the group ("shared": one context, every parameter, the largest arena and workspace). Empty when
// the models do not form one group.
Result<std::vector<BreakdownBar>> shared_arena_bars(const std::vector<const ir::Model*>& models);
// The same two bars from the group's figures (planner::shared_arena_figures).
std::vector<BreakdownBar> shared_arena_bars(const planner::SharedArenaFigures& figures);
// ... from the group's record and its members' plans (nothing offloaded).
std::vector<BreakdownBar> shared_arena_bars(const planner::SharedArena& group,
                                            const std::vector<const planner::MemoryPlan*>& plans);
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
