// The memory breakdown every printer renders (xopt's summary, report.json, report.html, `xviz
// breakdown`, plan-info, Python's plan_info, the shared-arena report): the device buckets as the
// CUDA executor allocates them (executor/cuda/session.h, Footprint) and the host bucket beside
// them. It joins the plan's Breakdown (memory_plan.h) with the offload schedule (offload.h), so a
// model whose weights partly stay in pinned host memory counts only the resident ones on the
// device:
//
//   device total = resident parameters + offload staging + arena + workspace + I/O region
//                  (what --mem-budget counts; the offload schedule's device_total)
//   total        = device total + CUDA context
//   host         = offloaded parameters (pinned)
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"
#include "planner/memory_plan.h"

namespace xopt::ir {
struct Model;
}  // namespace xopt::ir

namespace xopt::planner {

struct OffloadPlan;

struct MemoryBreakdown {
  // Device buckets.
  size_t cuda_context = 0;
  bool cuda_context_estimated = true;
  size_t parameters = 0;   // resident on the device (every parameter when nothing is offloaded)
  size_t staging = 0;      // the offload staging region
  size_t activations = 0;  // the arena (workspace values included when workspace_in_arena)
  size_t workspace = 0;    // the workspace region (0 when the workspace lives in the arena)
  bool workspace_estimated = true;
  bool workspace_in_arena = false;
  size_t largest_node_workspace = 0;  // with workspace_in_arena: the largest node's need
  size_t io = 0;                      // graph inputs and outputs outside the arena
  // Host bucket: parameters kept in pinned host memory and copied in before their readers.
  size_t offloaded = 0;
  size_t offloaded_weights = 0;
  // The --mem-budget the offload schedule was made for (0: none); the context is outside it.
  size_t budget = 0;
  bool has_offload = false;  // an offload schedule was made (it may offload nothing)
  std::string device;        // the GPU that measured the context and workspace (empty: estimates)

  size_t device_total() const { return parameters + staging + activations + workspace + io; }
  size_t total() const { return device_total() + cuda_context; }
  size_t host_total() const { return offloaded; }
  size_t all_parameters() const { return parameters + offloaded; }
};

// The breakdown of `plan`, with `offload` (may be null) moving weights from the device to the host.
MemoryBreakdown memory_breakdown(const MemoryPlan& plan, const OffloadPlan* offload = nullptr);
// The breakdown of a model carrying a plan, with its offload schedule when it has one.
Result<MemoryBreakdown> memory_breakdown(const ir::Model& model);

// The table people read ("memory breakdown", device rows, totals, host rows).
std::string breakdown_text(const MemoryBreakdown& b);
// The JSON object report.json, the shared-arena report and bench write as "breakdown":
//   {"device": {"parameters", "staging", "activations", "workspace", "io", "total",
//               "cuda_context", "total_with_context"}, "host": {"offloaded_parameters",
//               "total"}, "budget"?, "measured_on"?}
// each bucket {"bytes": N, ...}.
std::string breakdown_json(const MemoryBreakdown& b);

}  // namespace xopt::planner
