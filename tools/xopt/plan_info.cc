// xopt plan-info MODEL: reads the memory plan that plan-memory stored in the model's metadata and
// prints its summary and the memory breakdown (--values adds the per-value table).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "pipeline/algorithm_choices.h"
#include "planner/annotate.h"
#include "planner/memory_plan.h"
#include "planner/offload.h"
#include "planner/plan_text.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "planner/shape_range.h"
#include "planner/stage_split.h"
#include "tools/xopt/command.h"

namespace xopt::tool {
namespace {

struct PlanInfoOptions {
  std::string model;
  bool values = false;
  size_t devices = 0;
};

// --devices N: the planned order cut into N pipeline stages (planner/stage_split.h), each stage
// planned on its own, and what crosses each cut.
int print_stages(ir::Model& model, const planner::MemoryPlan& p, size_t devices,
                 const std::string& path) {
  Status inferred = ir::infer_shapes(*model.graph);  // value sizes and time estimates need shapes
  if (!inferred.is_ok()) return report(inferred, path);
  auto order = planner::resolve_node_order(*model.graph, p);
  if (!order.is_ok()) return report(order.status(), path);
  auto split = planner::split_into_stages(*model.graph, *order, devices);
  if (!split.is_ok()) return report_error(kExitUsage, split.status().message(), path);
  auto stages = planner::stage_models(model, *order, *split);
  if (!stages.is_ok()) return report(stages.status(), path);
  std::vector<size_t> arenas;
  for (const ir::Model& m : *stages) {
    planner::PlanOptions po;
    po.alignment = p.alignment;
    po.io_in_arena = p.io_in_arena;
    auto sp = planner::plan(*m.graph, po);
    if (!sp.is_ok()) return report(sp.status(), path);
    arenas.push_back(sp->arena_bytes);
  }
  std::printf(
      "split over %zu devices (contiguous stages of the plan's order, balancing parameter "
      "and estimated-time shares; each stage planned on its own):\n",
      devices);
  std::printf("  %-6s %7s %12s %10s %12s %6s %9s\n", "stage", "nodes", "parameters", "est. ms",
              "arena", "load", "receives");
  for (size_t s = 0; s < split->stages.size(); ++s) {
    const planner::Stage& st = split->stages[s];
    std::printf("  %-6zu %7zu %12s %10.3f %12s %6.3f %9zu\n", s, st.end - st.begin,
                planner::human_bytes(st.parameter_bytes).c_str(), st.estimated_ms,
                planner::human_bytes(arenas[s]).c_str(), st.load, st.receives.size());
  }
  size_t bytes = 0;
  for (const planner::Transfer& t : split->transfers) bytes += t.bytes;
  std::printf("  transfers: %zu values, %s in all\n", split->transfers.size(),
              planner::human_bytes(bytes).c_str());
  for (const planner::Transfer& t : split->transfers)
    std::printf("    %s: stage %zu -> %zu, %s\n", t.value.c_str(), t.from, t.to,
                planner::human_bytes(t.bytes).c_str());
  return kExitOk;
}

int run_plan_info(const PlanInfoOptions& o) {
  auto loaded = ir::load_model(o.model);
  if (!loaded.is_ok()) return report(loaded.status(), o.model);
  auto plan = planner::read_plan(*loaded);
  if (!plan.is_ok()) return report(plan.status(), o.model);
  Status st = planner::check_plan(*plan);
  if (!st.is_ok())
    return report_error(kExitBadModel, "stored plan is invalid: " + st.message(), o.model);
  const planner::MemoryPlan& p = *plan;
  std::printf("plan of %s: %zu nodes, %zu values, batch %lld, alignment %zu%s\n", o.model.c_str(),
              p.node_order.size(), p.values.size(), static_cast<long long>(p.batch), p.alignment,
              p.io_in_arena ? ", inputs/outputs in the arena" : "");
  std::printf("arena %zu bytes (%s), lower bound %zu, naive %zu, workspace %zu\n", p.arena_bytes,
              planner::human_bytes(p.arena_bytes).c_str(), p.lower_bound, p.naive_bytes,
              p.workspace_bytes);
  for (const planner::InputRange& r : p.input_ranges)
    std::printf("shape range %s: arena %zu bytes (%s) at the max, %zu (%s) at the min\n",
                planner::range_text(r).c_str(), p.arena_bytes,
                planner::human_bytes(p.arena_bytes).c_str(), p.min_arena_bytes,
                planner::human_bytes(p.min_arena_bytes).c_str());
  auto offload = planner::read_offload(*loaded);  // checked as it is read
  if (!offload.is_ok())
    return report_error(kExitBadModel,
                        "stored offload schedule is invalid: " + offload.status().message(),
                        o.model);
  if (*offload) {
    if ((*offload)->steps != static_cast<int>(p.node_order.size()))
      return report_error(kExitBadModel,
                          "stored offload schedule has " + std::to_string((*offload)->steps) +
                              " steps but the plan orders " + std::to_string(p.node_order.size()) +
                              " nodes",
                          o.model);
  }
  // The breakdown with the offload schedule's device and host buckets, as xopt printed it.
  std::fputs(planner::report_text(p, *offload ? &**offload : nullptr).c_str(), stdout);
  if (o.values) std::fputs(planner::plan_to_text(p).c_str(), stdout);
  if (*offload) std::fputs(planner::offload_text(**offload, o.values).c_str(), stdout);
  auto choices = pipeline::read_algorithm_choices(*loaded);
  if (!choices.is_ok()) return report_error(kExitBadModel, choices.status().message(), o.model);
  if (!choices->nodes.empty()) {
    std::printf("algorithm choices: %zu nodes, searched on %s (xopt --device cuda --tune)\n",
                choices->nodes.size(), choices->device.c_str());
    if (o.values)
      for (const auto& [node, choice] : choices->nodes)
        std::printf("  %s: %s\n", node.c_str(), choice.c_str());
  }
  if (o.devices != 0) return print_stages(*loaded, p, o.devices, o.model);
  return kExitOk;
}

std::function<int()> setup_plan_info(CLI::App& sub) {
  auto o = std::make_shared<PlanInfoOptions>();
  sub.add_option("model", o->model, "A model planned by xopt (--passes=...,plan)")->required();
  sub.add_flag("--values", o->values,
               "Also print every planned value (offset, size, steps, alias)");
  sub.add_option("--devices", o->devices,
                 "Also show how the plan's order would split over N devices in pipeline stages "
                 "(each stage's parameters, estimated time, own arena, and the values crossing "
                 "each cut); the executors do not run splits yet")
      ->check(CLI::Range(size_t{1}, size_t{4096}));
  return [o] { return run_plan_info(*o); };
}

}  // namespace

XOPT_SUBCOMMAND("plan-info", "prints the memory plan stored in an optimized model",
                setup_plan_info);

}  // namespace xopt::tool
