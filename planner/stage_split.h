// Pipeline stages (issue 28): a node order cut into contiguous stages, one per device, and each
// stage as a model of its own whose inputs are the values it receives from earlier stages and
// whose outputs are what it sends to later ones (and the graph outputs it produces).
//
// Balance. Each node carries a load: its share of the graph's parameter bytes (an initializer
// counted at its first reader) plus its share of the estimated time (cost_model.h), so a whole
// graph has load 2 and a stage's load says how much of the memory and of the time it takes. The
// split minimizes the largest stage load over every contiguous split of the order (exact: a
// search over the threshold with a greedy check, see min_max_partition). Arena and workspace are
// not in the load yet: each stage is planned afterwards, as one model today is.
//
// Transfers. A value produced in stage i and read in stage j > i (explicitly or from inside a
// subgraph) is sent once from i to every such j; values stay where they are produced.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/cost_model.h"

namespace xopt::planner {

struct Stage {
  size_t begin = 0, end = 0;  // the nodes order[begin, end)
  double load = 0;  // parameter share + time share (summed over stages: 2; 1 without weights)
  size_t parameter_bytes = 0;  // of the initializers its nodes read (each stage holds its own)
  double estimated_ms = 0;
  std::vector<std::string> receives;  // values produced by earlier stages that it reads
  std::vector<std::string> sends;     // values it produces that later stages read
};

struct Transfer {
  std::string value;
  size_t from = 0, to = 0;
  size_t bytes = 0;
};

struct StageSplit {
  std::vector<Stage> stages;
  std::vector<Transfer> transfers;  // one per (value, receiving stage)
};

// Cuts `values` (non-negative, in order) into `parts` non-empty contiguous runs with the smallest
// largest sum; returns each run's first index (the first is 0). parts must be in [1, size].
std::vector<size_t> min_max_partition(const std::vector<double>& values, size_t parts);

// The split of `order` (a topological order of `graph`'s nodes, shapes inferred: value sizes and
// time estimates read them) over `devices` stages.
Result<StageSplit> split_into_stages(const ir::Graph& graph,
                                     const std::vector<const ir::Node*>& order, size_t devices,
                                     const DeviceModel& device = {});

// Each stage as a model: its nodes in order, the initializers they read, the graph inputs and
// received values as inputs, the sent values and graph outputs it produces as outputs; shapes
// inferred, so each can be planned.
Result<std::vector<ir::Model>> stage_models(const ir::Model& model,
                                            const std::vector<const ir::Node*>& order,
                                            const StageSplit& split);

}  // namespace xopt::planner
