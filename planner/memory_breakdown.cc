#include "planner/memory_breakdown.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/format.h"
#include "ir/graph.h"
#include "planner/annotate.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "planner/report.h"

namespace xopt::planner {

MemoryBreakdown memory_breakdown(const MemoryPlan& plan, const OffloadPlan* offload) {
  const Breakdown& p = plan.breakdown;
  MemoryBreakdown b;
  b.cuda_context = p.cuda_context;
  b.cuda_context_estimated = p.cuda_context_estimated;
  b.parameters = p.parameters;
  b.activations = p.activations;
  b.workspace = p.workspace;
  b.workspace_estimated = p.workspace_estimated;
  b.workspace_in_arena = plan.workspace_in_arena;
  for (size_t w : plan.node_workspace)
    b.largest_node_workspace = std::max(b.largest_node_workspace, w);
  b.io = p.io;
  b.device = p.device;
  if (offload != nullptr) {
    b.has_offload = true;
    b.budget = offload->budget;
    b.parameters = offload->resident_parameters;
    b.staging = offload->staging_bytes;
    b.offloaded = offload->offloaded_bytes;
    b.offloaded_weights = offload->weights.size();
  }
  return b;
}

Result<MemoryBreakdown> memory_breakdown(const ir::Model& model) {
  XOPT_ASSIGN_OR_RETURN(MemoryPlan plan, read_plan(model));
  XOPT_ASSIGN_OR_RETURN(std::optional<OffloadPlan> offload, read_offload(model));
  return memory_breakdown(plan, offload ? &*offload : nullptr);
}

std::string breakdown_text(const MemoryBreakdown& b) {
  const size_t total = b.total();
  std::string out = "memory breakdown (device, as the executor allocates it)\n";
  auto line = [&](const std::string& name, size_t bytes, const std::string& note) {
    out +=
        format("  %-28s %16zu  %12s  %6.1f%%", name.c_str(), bytes, human_bytes(bytes).c_str(),
               total == 0 ? 0.0 : 100.0 * static_cast<double>(bytes) / static_cast<double>(total));
    out += note.empty() ? "\n" : "  " + note + "\n";
  };
  const bool offloads = b.offloaded > 0;
  line(offloads ? "parameters (resident)" : "parameters", b.parameters, "");
  if (offloads || b.staging > 0)
    line("offload staging", b.staging, "(offloaded weights are copied in here)");
  line(b.workspace_in_arena ? "activations + workspace" : "activations (arena)", b.activations, "");
  if (b.workspace_in_arena && b.workspace == 0)
    out += format("  %-28s %16s  %12s  (largest node's: %s, %s)\n", "workspace", "in the arena", "",
                  human_bytes(b.largest_node_workspace).c_str(),
                  b.workspace_estimated ? "estimated" : "the GPU's algorithms");
  else
    line(b.workspace_estimated ? "workspace (estimate)" : "workspace (GPU algorithms)", b.workspace,
         "");
  line("inputs/outputs", b.io, "(graph inputs and outputs outside the arena)");
  std::string budget;
  if (b.budget > 0)
    budget =
        (b.device_total() <= b.budget ? "(within the --mem-budget of " : "(OVER the budget of ") +
        human_bytes(b.budget) + ")";
  line("device total", b.device_total(), budget.empty() ? "(context not included)" : budget);
  line(b.cuda_context_estimated ? "CUDA context (estimate)" : "CUDA context (measured)",
       b.cuda_context, "");
  line("total", total, "(device total + CUDA context)");
  if (!b.device.empty())
    out += format("  measured on %s (the context estimate was %s)\n", b.device.c_str(),
                  human_bytes(kCudaContextEstimate).c_str());
  if (b.has_offload) {
    out += "host (pinned memory)\n";
    out += format("  %-28s %16zu  %12s  (%zu weights, of %s parameters in all)\n",
                  "offloaded parameters", b.offloaded, human_bytes(b.offloaded).c_str(),
                  b.offloaded_weights, human_bytes(b.all_parameters()).c_str());
  }
  return out;
}

std::string breakdown_json(const MemoryBreakdown& b) {
  nlohmann::json device = {
      {"parameters", {{"bytes", b.parameters}}},
      {"staging", {{"bytes", b.staging}}},
      {"activations", {{"bytes", b.activations}, {"workspace_in_arena", b.workspace_in_arena}}},
      {"workspace",
       {{"bytes", b.workspace},
        {"estimated", b.workspace_estimated},
        {"in_arena", b.workspace_in_arena},
        {"largest_node", b.largest_node_workspace}}},
      {"io", {{"bytes", b.io}}},
      {"total", {{"bytes", b.device_total()}}},
      {"cuda_context", {{"bytes", b.cuda_context}, {"estimated", b.cuda_context_estimated}}},
      {"total_with_context", {{"bytes", b.total()}}}};
  if (!b.device.empty()) device["cuda_context"]["estimate_before_measuring"] = kCudaContextEstimate;
  nlohmann::json host = {
      {"offloaded_parameters", {{"bytes", b.offloaded}, {"weights", b.offloaded_weights}}},
      {"total", {{"bytes", b.host_total()}}}};
  nlohmann::json j = {{"device", device}, {"host", host}, {"parameters", b.all_parameters()}};
  if (b.has_offload) j["budget"] = {{"bytes", b.budget}, {"within", b.device_total() <= b.budget}};
  if (!b.device.empty()) j["measured_on"] = b.device;
  return j.dump();
}

}  // namespace xopt::planner
