#include "planner/report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/format.h"
#include "planner/memory_breakdown.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "planner/shape_range.h"

namespace xopt::planner {
namespace {

double ratio(size_t a, size_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

}  // namespace

std::string human_bytes(size_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (size_t{1} << 30)) return format("%.2f GiB", b / (1 << 30));
  if (bytes >= (size_t{1} << 20)) return format("%.2f MiB", b / (1 << 20));
  if (bytes >= (size_t{1} << 10)) return format("%.2f KiB", b / (1 << 10));
  return format("%zu B", bytes);
}

std::string report_text(const MemoryPlan& plan, const OffloadPlan* offload) {
  std::string out = breakdown_text(memory_breakdown(plan, offload));
  out += "activation planning\n";
  out += format("  %-28s %s%s\n", "strategy", plan.strategy.c_str(),
                plan.proven_optimal ? " (optimal for this order)" : "");
  out += format("  %-28s %16zu  %12s\n", "arena", plan.arena_bytes,
                human_bytes(plan.arena_bytes).c_str());
  out += format("  %-28s %16zu  %12s\n", "lower bound (peak live)", plan.lower_bound,
                human_bytes(plan.lower_bound).c_str());
  out += format("  %-28s %16zu  %12s\n", "naive, this graph", plan.naive_bytes,
                human_bytes(plan.naive_bytes).c_str());
  if (plan.input_naive_bytes != 0)
    out += format("  %-28s %16zu  %12s\n", "naive, model as given", plan.input_naive_bytes,
                  human_bytes(plan.input_naive_bytes).c_str());
  out += format("  %-28s %16.4f\n", "arena / lower bound", plan.ratio_to_lower_bound());
  out += format("  %-28s %16.2fx\n", "naive this graph / arena",
                ratio(plan.naive_bytes, plan.arena_bytes));
  if (plan.input_naive_bytes != 0)
    out += format("  %-28s %16.2fx\n", "naive as given / arena",
                  ratio(plan.input_naive_bytes, plan.arena_bytes));
  if (!plan.input_ranges.empty()) {
    // A plan for a range of shapes: made at the max, holds every shape down to the min.
    out += "shape range (planned at the max, runs anywhere in the range)\n";
    for (const InputRange& r : plan.input_ranges)
      out += "  " + r.name + ": min " + dims_text(r.min) +
             (r.opt.empty() ? "" : ", opt " + dims_text(r.opt)) + ", max " + dims_text(r.max) +
             "\n";
    out += format("  %-28s %16zu  %12s\n", "arena at the max", plan.arena_bytes,
                  human_bytes(plan.arena_bytes).c_str());
    out += format("  %-28s %16zu  %12s\n", "arena at the min", plan.min_arena_bytes,
                  human_bytes(plan.min_arena_bytes).c_str());
  }
  if (!plan.strategies.empty()) {
    out += "strategies\n";
    for (const StrategyResult& s : plan.strategies)
      out += format("  %-28s %16zu  %12s  %6.4f%s\n", s.name.c_str(), s.arena_bytes,
                    human_bytes(s.arena_bytes).c_str(),
                    plan.lower_bound == 0 ? 1.0 : ratio(s.arena_bytes, plan.lower_bound),
                    s.optimal ? "  optimal" : "");
  }
  return out;
}

std::string report_json(const MemoryPlan& plan, const OffloadPlan* offload) {
  nlohmann::json j;
  j["format"] = "xopt.memory_report";
  // Version 2: the breakdown's device and host buckets (planner/memory_breakdown.h), the offload
  // schedule beside it.
  j["version"] = 2;
  j["breakdown"] = nlohmann::json::parse(breakdown_json(memory_breakdown(plan, offload)));
  j["planning"] = {{"strategy", plan.strategy},
                   {"arena_bytes", plan.arena_bytes},
                   {"lower_bound", plan.lower_bound},
                   {"naive_bytes", plan.naive_bytes},
                   {"arena_over_lower_bound", plan.ratio_to_lower_bound()},
                   {"naive_over_arena", ratio(plan.naive_bytes, plan.arena_bytes)},
                   {"input_naive_bytes", plan.input_naive_bytes},
                   {"input_naive_over_arena", ratio(plan.input_naive_bytes, plan.arena_bytes)},
                   {"proven_optimal", plan.proven_optimal},
                   {"alignment", plan.alignment},
                   {"io_in_arena", plan.io_in_arena},
                   {"batch", plan.batch},
                   {"nodes", plan.node_order.size()},
                   {"values", plan.values.size()},
                   {"workspace_bytes", plan.workspace_bytes},
                   {"workspace_in_arena", plan.workspace_in_arena}};
  if (!plan.input_ranges.empty()) {
    auto& ranges = j["planning"]["input_ranges"] = nlohmann::json::array();
    for (const InputRange& r : plan.input_ranges) {
      nlohmann::json e = {{"name", r.name}, {"min", r.min}, {"max", r.max}};
      if (!r.opt.empty()) e["opt"] = r.opt;
      ranges.push_back(std::move(e));
    }
    j["planning"]["min_arena_bytes"] = plan.min_arena_bytes;
    j["planning"]["max_arena_bytes"] = plan.arena_bytes;
  }
  auto& s = j["strategies"] = nlohmann::json::array();
  for (const StrategyResult& r : plan.strategies)
    s.push_back({{"name", r.name}, {"arena_bytes", r.arena_bytes}, {"optimal", r.optimal}});
  if (offload != nullptr) j["offload"] = nlohmann::json::parse(offload_to_json(*offload));
  return j.dump(2);
}

}  // namespace xopt::planner
