// The memory planner: a pure function of (graph, node order, options) -> MemoryPlan.
//
//   lifetimes (lifetimes.h) -> views and in-place reuse (aliasing.h) -> one buffer per alias root
//   -> every offset strategy (strategies.h), keep the smallest arena -> workspace (workspace.h) ->
//   plan.
//
// The plan reports its lower bound (max bytes live at one step for this order, each alias root
// counted once), so arena / lower bound measures how much the placement wastes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"
#include "planner/strategies.h"

namespace xopt::planner {

// What a CUDA context costs on an H200 before any allocation (an estimate, marked as such in
// reports until an executor measures it).
inline constexpr size_t kCudaContextEstimate = size_t{500} << 20;

struct PlanOptions {
  size_t alignment = 256;
  bool io_in_arena = false;             // graph inputs and outputs in the arena too
  bool views = true;                    // Reshape & co. share their input's bytes
  bool in_place = true;                 // elementwise ops overwrite an input that dies there
  std::vector<std::string> strategies;  // names from strategy_names() to run; empty runs all
  ExactOptions exact;
  bool workspace = true;
  // Each node's workspace becomes a value of the arena live at its step only
  // (MemoryPlan::workspace_in_arena) instead of one region sized for the largest need.
  bool workspace_in_arena = false;
  // Each node's workspace, parallel to the order (e.g. measured on the GPU); empty: the
  // planner's estimate (planner/workspace.h).
  std::vector<size_t> node_workspace;
  size_t cuda_context_bytes = kCudaContextEstimate;
  bool cuda_context_estimated = true;
  int64_t batch = 0;  // recorded in the plan (0: the shapes as given)
};

Result<MemoryPlan> plan(const ir::Graph& graph, const std::vector<const ir::Node*>& order,
                        const PlanOptions& options = {});
// On the graph's own node order.
Result<MemoryPlan> plan(const ir::Graph& graph, const PlanOptions& options = {});

// `plan` made again on its own node order and options with each node's workspace given (e.g.
// measured on the GPU): the workspace values move when they live in the arena. The figures the
// plan records from outside (input_naive_bytes, the breakdown's context and device) are kept.
Result<MemoryPlan> replan_with_workspace(const ir::Graph& graph, const MemoryPlan& plan,
                                         std::vector<size_t> node_workspace);

// Per step of the plan's order: how many bytes below the activations' peak the live activations
// leave (workspace values and aliases left out), rounded down to the alignment. A node's workspace
// of at most that many bytes raises no peak of the arena (packing aside).
std::vector<size_t> activation_slack(const MemoryPlan& plan);

// How plans name nodes: the node name, or "@" + its first output's name for an unnamed node (output
// names are unique in a graph).
std::string node_key(const ir::Node& n);

// The nodes a plan's node_order names, in that order (the graph's order when it names none). Errors
// name a key that matches no node or several, and a node listed twice or not at all.
Result<std::vector<const ir::Node*>> resolve_node_order(const ir::Graph& graph,
                                                        const MemoryPlan& plan);

// Parameter bytes: every initializer, each rounded up to the alignment.
size_t parameter_bytes(const ir::Graph& graph, size_t alignment = 256);

// The executor's I/O region for `plan`: graph inputs and outputs the plan keeps outside the arena,
// and outputs nobody reads, each rounded up to the plan's alignment (executor/cuda/session.cc
// allocates the same bytes). Values whose size is not static count 0.
size_t io_region_bytes(const ir::Graph& graph, const MemoryPlan& plan);

}  // namespace xopt::planner
