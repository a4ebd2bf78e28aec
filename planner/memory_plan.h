// The memory plan: where every activation lives inside one arena, and when. Produced by the planner
// (a pure function of graph + node order), stored in the model as
// metadata_props["xopt.memory_plan"], read back by xviz and the executors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace xopt::planner {

// One planned tensor. Steps index MemoryPlan::node_order; step -1 means "before the first node"
// (graph inputs). A value that aliases another (a view, or an in-place result) has `alias_of` set
// and shares that value's bytes: its offset lies inside the root's range. A root's steps cover the
// steps of all its aliases (the bytes stay reserved until the last alias is read).
struct PlannedValue {
  std::string name;
  size_t offset = 0;  // bytes from the arena base
  size_t size = 0;    // aligned bytes reserved
  size_t bytes = 0;   // exact tensor bytes (size rounds this up)
  int first_step = 0;
  int last_step = 0;
  std::string alias_of;  // empty, or the value whose bytes this one reuses
  // Why it aliases: "view" (Reshape, Squeeze, ...) or "in-place" (an elementwise op overwriting an
  // input that dies there). Empty for a root. Added in version 2.
  std::string alias_kind;
  // "activation", "input" or "output" (graph inputs and outputs when io_in_arena). Added in
  // version 2. Version 3: "workspace", one node's scratch inside the arena (workspace_in_arena),
  // named workspace_value_name(node key) and live at that node's step only.
  std::string role = "activation";
};

// The arena one offset-assignment strategy reached for this order (the plan keeps the smallest).
struct StrategyResult {
  std::string name;
  size_t arena_bytes = 0;
  bool optimal = false;  // proven optimal for this order (exact search completed or = lower bound)
};

// The plan's memory buckets, every parameter counted on the device (the offload schedule, stored
// apart, moves some to the host: planner/memory_breakdown.h joins the two for every printer).
struct Breakdown {
  size_t cuda_context = 0;
  bool cuda_context_estimated = true;
  size_t parameters = 0;
  size_t activations = 0;  // the arena
  size_t workspace = 0;
  // Graph inputs and outputs outside the arena, and outputs nobody reads: the executor's I/O
  // region (planner::io_region_bytes). Optional field "io" of version 3; read_plan computes it
  // from the model's graph for a plan stored without it.
  size_t io = 0;
  // Set when a GPU measured the context and sized the workspace from its chosen algorithms: the
  // device, driver, CUDA and cuDNN versions. Empty: both are the planner's estimates.
  std::string device;
  bool workspace_estimated = true;
  // Every parameter on the device; planner/memory_breakdown.h has the breakdown with offload.
  size_t total() const { return cuda_context + parameters + activations + workspace + io; }
};

// The planned value that holds node `node_key`'s workspace when it lives in the arena.
inline std::string workspace_value_name(const std::string& node_key) {
  return node_key + "#workspace";
}

// A range of shapes one graph input may take (`--input-shape x=1x3x48x32:1x3x48x2048`, TensorRT's
// min/opt/max profile): every dim lies between min's and max's. The plan is made at max; opt (empty
// when not given) is only recorded.
struct InputRange {
  std::string name;
  std::vector<int64_t> min, opt, max;
};

struct MemoryPlan {
  // Version 2 added alias_kind, role, strategies, node_workspace and proven_optimal; version 3
  // workspace_in_arena. Older documents still read (the new fields take their defaults).
  static constexpr int kVersion = 3;
  static constexpr int kOldestReadableVersion = 1;
  int version = kVersion;
  size_t alignment = 256;
  size_t arena_bytes = 0;
  size_t lower_bound = 0;               // max bytes live at one step for this order
  size_t naive_bytes = 0;               // one buffer per value of the planned graph
  size_t input_naive_bytes = 0;         // one buffer per value of the model as given (0: unknown)
  std::string strategy;                 // the offset-assignment strategy that won
  bool io_in_arena = false;             // graph inputs and outputs planned inside the arena
  int64_t batch = 0;                    // the batch the plan was made for (0: as given)
  std::vector<std::string> node_order;  // node names, in execution order
  std::vector<PlannedValue> values;
  size_t workspace_bytes = 0;          // one scratch region, sized for the largest node's need
  std::vector<size_t> node_workspace;  // each node's scratch need, parallel to node_order
  // Each node's scratch is a value of the arena (role "workspace", live at its step only) instead
  // of one region of its own: it takes bytes the activations leave free at that step, and
  // workspace_bytes is 0.
  bool workspace_in_arena = false;
  std::vector<StrategyResult> strategies;
  bool proven_optimal = false;  // arena is optimal for this order (not just within the bound)
  Breakdown breakdown;
  // Set for a plan made for a range of input shapes (planner/shape_range.h): the plan's sizes are
  // the largest shapes', any input inside every range runs in it (each value at its offset, in at
  // most its planned bytes), and min_arena_bytes is the arena the same graph needs at the min
  // shapes. Optional fields of version 3 ("input_ranges", "min_arena_bytes"); empty: the plan
  // holds the planned shapes only.
  std::vector<InputRange> input_ranges;
  size_t min_arena_bytes = 0;

  const PlannedValue* find(const std::string& name) const;
  double ratio_to_lower_bound() const {
    return lower_bound == 0 ? 1.0
                            : static_cast<double>(arena_bytes) / static_cast<double>(lower_bound);
  }
};

// Versioned JSON form (the document stored in the model's metadata).
std::string plan_to_json(const MemoryPlan& plan);
Result<MemoryPlan> plan_from_json(const std::string& json);

// Proves that no two values with overlapping lifetimes share bytes (aliases excepted) and that
// every value lies inside the arena. The error names both values. A plan read from a model may lie,
// so every number is checked: steps inside -1..node_order.size()-1, no range that wraps around, an
// arena no larger than its values need, aliases inside the bytes they alias. Errors are
// kInvalidModel (the plan is part of the model).
Status check_plan(const MemoryPlan& plan);

}  // namespace xopt::planner
