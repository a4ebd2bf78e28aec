// Batch sizing: how large a batch fits in a memory budget. The search is pure: it asks a callback
// for the plan at a given batch (the caller binds the batch dim, infers shapes and plans).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"
#include "planner/planner.h"

namespace xopt::planner {

using PlanAtBatch = std::function<Result<MemoryPlan>(int64_t batch)>;

struct BatchBudget {
  size_t budget_bytes = 0;
  size_t parameter_bytes = 0;
  size_t cuda_context_bytes = 0;
  int64_t max_batch = int64_t{1} << 20;  // search no further than this
};

struct BatchProbe {
  int64_t batch = 0;
  size_t total_bytes = 0;  // footprint(): params + arena + workspace + I/O + context
  bool fits = false;
};

struct BatchFit {
  int64_t batch = 0;  // the largest batch that fits; 0 when not even batch 1 does
  MemoryPlan plan;    // the plan at that batch (empty when batch is 0)
  size_t total_bytes = 0;
  std::vector<BatchProbe> probes;  // every batch planned, in the order tried
};

// Params + arena + workspace + I/O region + context of a plan: the total of its breakdown
// (planner/memory_breakdown.h) with every parameter resident.
size_t footprint(const MemoryPlan& plan, size_t parameter_bytes, size_t cuda_context_bytes);

// Doubles the batch until it no longer fits, then bisects. The arena is not exactly linear in the
// batch, so the answer is verified: it fits and the next batch does not (else the search walks up).
Result<BatchFit> max_batch(const BatchBudget& budget, const PlanAtBatch& plan_at);

// Binds the leading dim of every runtime input of `g` to `batch` (ir::bind_input_shapes) and infers
// every intermediate shape again from nothing (shapes left from another batch would survive where
// inference cannot tell a dim). Inputs whose leading dim is symbolic or unknown are rebound; with
// `override_static` a static leading dim is rebound too.
Status rebind_batch(ir::Graph& g, int64_t batch, bool override_static);

// Plans `model` at `batch`: on a copy of the model, the leading dim of every runtime input is bound
// to `batch` (ir::bind_input_shapes), shapes are inferred again (ir::infer_shapes) and the copy is
// planned in its own order. Inputs whose leading dim is symbolic or unknown are rebound; with
// `override_static` a static leading dim is rebound too (exporters often fix the batch to 1).
// Errors name a value whose size stays unknown, or the node where inference fails.
Result<MemoryPlan> plan_at_batch(const ir::Model& model, int64_t batch,
                                 const PlanOptions& options = {}, bool override_static = false);

// plan_at_batch as a max_batch callback. The model is copied once, when the callback is made, and
// every call rebinds that copy: a search of thirty batches does not copy the weights thirty times.
PlanAtBatch batch_planner(const ir::Model& model, const PlanOptions& options = {},
                          bool override_static = false);

}  // namespace xopt::planner
