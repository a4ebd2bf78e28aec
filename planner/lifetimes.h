// Lifetimes of the values the arena holds, on a given node order: each activation lives from the
// step that writes it to the step of its last read. Steps index the order; step -1 is "before the
// first node", where graph inputs are written when they live in the arena.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::planner {

struct LifetimeOptions {
  size_t alignment = 256;
  // Plan graph inputs (live from step -1) and outputs (live to the last step) inside the arena too.
  bool io_in_arena = false;
};

struct Lifetime {
  const ir::Value* value = nullptr;
  size_t bytes = 0;  // exact tensor bytes
  size_t size = 0;   // bytes rounded up to the alignment
  int first = 0;     // the step that writes it (-1 for graph inputs)
  int last = 0;      // the step of its last read (the last step for graph outputs)
};

struct Lifetimes {
  std::vector<Lifetime> values;  // graph inputs first, then node outputs in order
  std::unordered_map<const ir::Value*, size_t> index;
  int num_steps = 0;
  const Lifetime* find(const ir::Value* v) const {
    auto it = index.find(v);
    return it == index.end() ? nullptr : &values[it->second];
  }
};

// The graph's nodes in their current (topological) order.
std::vector<const ir::Node*> graph_order(const ir::Graph& graph);

// Whether `v` is held in the arena: node outputs, plus graph inputs and outputs when io_in_arena.
// Initializers are parameters and never are; neither are non-tensor values (sequences, maps,
// optionals), whose size no static shape gives: executors allocate those on their own.
bool lives_in_arena(const ir::Value& v, bool io_in_arena);

// Exact bytes of a tensor value; an error names the value when its shape is not static or its
// element type has no fixed size.
Result<size_t> value_bytes(const ir::Value& v);

// Lifetimes on `order`, which must hold every node of the graph once, producers before consumers.
Result<Lifetimes> compute_lifetimes(const ir::Graph& graph,
                                    const std::vector<const ir::Node*>& order,
                                    const LifetimeOptions& options = {});

// One buffer per value: the aligned bytes of every value the arena would hold, summed. Measured on
// the model as given (before fold/fuse) it is the baseline a user without a planner pays.
Result<size_t> naive_bytes(const ir::Graph& graph, const LifetimeOptions& options = {});

}  // namespace xopt::planner
