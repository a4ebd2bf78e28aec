// xopt plan-info MODEL: reads the memory plan that plan-memory stored in the model's metadata and
// prints its summary and the memory breakdown (--values adds the per-value table).
#include <cstdio>
#include <memory>
#include <string>

#include "ir/onnx_io.h"
#include "pipeline/algorithm_choices.h"
#include "planner/annotate.h"
#include "planner/memory_plan.h"
#include "planner/offload.h"
#include "planner/plan_text.h"
#include "planner/report.h"
#include "planner/shape_range.h"
#include "tools/xopt/command.h"

namespace xopt::tool {
namespace {

struct PlanInfoOptions {
  std::string model;
  bool values = false;
};

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
  return kExitOk;
}

std::function<int()> setup_plan_info(CLI::App& sub) {
  auto o = std::make_shared<PlanInfoOptions>();
  sub.add_option("model", o->model, "A model planned by xopt (--passes=...,plan)")->required();
  sub.add_flag("--values", o->values,
               "Also print every planned value (offset, size, steps, alias)");
  return [o] { return run_plan_info(*o); };
}

}  // namespace

XOPT_SUBCOMMAND("plan-info", "prints the memory plan stored in an optimized model",
                setup_plan_info);

}  // namespace xopt::tool
