// The pass interface: a pass is a small class whose run() rewrites a model and says whether it
// changed anything (XLA's StatusOr<bool>). "Did not apply" is false, never an error; an error means
// the pass could not complete or found the IR broken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "passes/precision/precision_options.h"
#include "planner/batch.h"
#include "planner/memory_plan.h"

namespace xopt::passes {

// Options passes read. Tools fill them from flags; tests set them directly.
struct PassOptions {
  // Constant folding leaves a computation alone when its result would be larger than this, so a
  // folded model does not grow by materialising big broadcasts.
  size_t fold_max_bytes = size_t{1} << 20;
  // Bindings for symbolic input dims (--input-shape, --batch), applied before shape inference.
  ir::ShapeBindings shape_bindings;
  // Ranges of input shapes (--input-shape NAME=MIN:MAX): the tool binds the dims fixed across a
  // range (planner::bind_range) and plan-memory plans for the whole range (planner::plan_range).
  std::vector<planner::InputRange> shape_ranges;
  // Memory planning (the plan group): arena alignment, graph inputs/outputs inside the arena, and
  // a memory budget (0: none) for which plan-memory finds the largest batch that fits and plans
  // the model at that batch.
  size_t plan_alignment = 256;
  bool plan_io_in_arena = false;
  // Each node's workspace as a value of the arena live at its step (planner::PlanOptions).
  bool plan_workspace_in_arena = false;
  size_t max_batch_bytes = 0;
  // The batch recorded in the plan (--batch; 0: the shapes as given).
  int64_t plan_batch = 0;
  // One buffer per value of the model before any pass ran (planner::naive_bytes; 0: unknown).
  // Tools measure it; plan-memory records it in the plan, next to the planned graph's own naive.
  size_t input_naive_bytes = 0;
  // The precision pass (convert-precision): fp32 by default, which changes nothing.
  PrecisionOptions precision;
};

// What plan-memory leaves for the tool to print: the plan written into the model and, after a
// --max-batch search, the batch found and the plan at the next batch (which does not fit).
struct PlanOutcome {
  planner::MemoryPlan plan;
  double seconds = 0;  // planning time
  bool batch_searched = false;
  planner::BatchFit fit;  // fit.plan is moved into `plan`
  size_t budget_bytes = 0;
  bool has_next = false;  // a plan at fit.batch + 1 exists
  planner::MemoryPlan next_plan;
  size_t next_total_bytes = 0;
};

// "1x3x224x224" -> {1,3,224,224}; errors say what is wrong with the text.
Result<std::vector<int64_t>> parse_dims(std::string_view text);
// "input=1x3x224x224" -> ("input", dims). The name may itself contain '='; the last one splits.
Result<std::pair<std::string, std::vector<int64_t>>> parse_input_shape(std::string_view text);
// "input=1x3x48x32:1x3x48x2048" or "input=MIN:OPT:MAX" -> the range; plain "input=DIMS" gives a
// range with min = max. Errors say what is wrong with the text (checked with
// planner::check_ranges: ranks agree, min <= opt <= max).
Result<planner::InputRange> parse_input_shape_range(std::string_view text);

// What a pass sees besides the model: options, named statistics counters and the shape analysis.
class PassContext {
 public:
  PassContext() = default;
  explicit PassContext(PassOptions options) : options_(std::move(options)) {}

  const PassOptions& options() const { return options_; }
  PassOptions& mutable_options() { return options_; }

  // Adds `n` to a named counter of the running pass; the statistics table shows them next to the
  // pass
  // ("fuse-conv-bn: 20"). Outside a PassManager the counters accumulate in counters().
  void count(std::string_view counter, int64_t n = 1);
  const std::map<std::string, int64_t, std::less<>>& counters() const {
    return sink_ != nullptr ? *sink_ : own_counters_;
  }

  // Makes every value's dtype and shape current: binds the input shapes and re-runs shape inference
  // when it never ran or a pass changed the graph since. Passes that read shapes call this first.
  Status require_shapes(ir::Model& model);
  bool shapes_valid() const { return shapes_valid_; }
  // The manager calls this after a pass that changed the graph and does not preserve shapes.
  void invalidate_shapes() { shapes_valid_ = false; }
  // Tools that ran bind_input_shapes + infer_shapes themselves say so, to save a second run.
  void mark_shapes_valid() { shapes_valid_ = true; }
  // How often require_shapes ran inference, and for how long (reported with the pass statistics).
  int64_t shape_inference_runs() const { return inference_runs_; }
  double shape_inference_seconds() const { return inference_seconds_; }

  // Set by plan-memory (the last plan made in this context).
  std::optional<PlanOutcome>& plan_outcome() { return plan_outcome_; }
  const std::optional<PlanOutcome>& plan_outcome() const { return plan_outcome_; }

  // Internal (PassManager): where count() goes while a pass runs; nullptr restores the default.
  void set_counter_sink(std::map<std::string, int64_t, std::less<>>* sink) { sink_ = sink; }

 private:
  PassOptions options_;
  std::map<std::string, int64_t, std::less<>> own_counters_;
  // Not a pointer to own_counters_ by default: a copied or assigned context would keep pointing
  // into the one it came from (passes/subgraphs.cc assigns a fresh context to retry a subgraph).
  std::map<std::string, int64_t, std::less<>>* sink_ = nullptr;
  bool shapes_valid_ = false;
  int64_t inference_runs_ = 0;
  double inference_seconds_ = 0;
  std::optional<PlanOutcome> plan_outcome_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  // The kebab-case name used by --passes, the registry, the statistics and the tests.
  virtual std::string_view name() const = 0;
  // Rewrites the model; true when anything changed.
  virtual Result<bool> run(ir::Model& model, PassContext& ctx) = 0;
  // True when the dtypes and shapes of the values a change leaves in the graph stay right (the pass
  // only removes nodes or reroutes uses to equal values), so the manager need not re-run inference.
  virtual bool preserves_shapes() const { return false; }
};

}  // namespace xopt::passes
