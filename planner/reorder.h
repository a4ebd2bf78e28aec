// Memory-aware ordering: a topological order of the nodes that lowers the peak of live bytes (the
// planner's lower bound). Views are folded into their roots as the planner does; in-place reuse,
// which depends on the order, is not modelled. Small graphs are ordered exactly (dynamic
// programming over the sets of executed nodes), larger ones greedily with a lookahead; the original
// order is kept when nothing beats it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/lifetimes.h"
#include "planner/memory_plan.h"
#include "planner/planner.h"

namespace xopt::planner {

struct ReorderOptions {
  int lookahead = 3;  // greedy: each candidate is scored by a greedy rollout this deep
  size_t max_lookahead_ready = 64;  // above this many ready nodes, score one step ahead only
  size_t exact_max_nodes = 20;      // dynamic programming up to this many nodes...
  size_t exact_max_states = size_t{1} << 18;  // ...and this many sets of executed nodes
};

struct Reordering {
  std::vector<const ir::Node*> order;
  size_t peak_bytes = 0;           // of `order`, under the cost model
  size_t original_peak_bytes = 0;  // of the graph's own order
  std::string method;              // "original", "greedy", "exact"
  bool optimal = false;            // exact search finished: no order has a lower peak
};

Result<Reordering> memory_aware_order(const ir::Graph& graph, const LifetimeOptions& lifetimes = {},
                                      const ReorderOptions& options = {});

// Peak live bytes of `order` under the ordering cost model (equal to the planner's lower bound with
// in-place reuse off).
Result<size_t> order_peak_bytes(const ir::Graph& graph, const std::vector<const ir::Node*>& order,
                                const LifetimeOptions& lifetimes = {});

// Plans the graph's own order and the memory-aware one and keeps the reordering only when its
// planned arena is smaller (a lower peak does not always give a smaller arena).
Result<MemoryPlan> plan_with_reorder(const ir::Graph& graph, const PlanOptions& options = {},
                                     const ReorderOptions& reorder = {});

}  // namespace xopt::planner
