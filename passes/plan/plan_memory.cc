// Plans activation memory (planner/planner.h) on the graph's current node order and writes the
// plan into the model as metadata_props["xopt.memory_plan"] (planner/annotate.h). The plan and its
// breakdown stay in the PassContext (plan_outcome) for the tool to print.
//
// Needs static shapes: a value of unknown size is an error naming it. With a memory budget
// (PassOptions::max_batch_bytes) it first finds the largest batch whose parameters + arena +
// workspace + I/O region + CUDA context fit (planner/batch.h), rebinds the model's batch dim to it
// and plans there; the plan at the next batch is kept to show why that one does not fit.
#include <chrono>

#include "ir/shape_inference.h"
#include "passes/pass_registry.h"
#include "planner/annotate.h"
#include "planner/batch.h"
#include "planner/planner.h"
#include "planner/shape_range.h"

namespace xopt::passes {
namespace {

// The requested batch when some runtime input's leading dim is that batch (--batch binds only
// symbolic leading dims: a model exported at a static batch keeps it), else 0 (shapes as given).
int64_t bound_batch(const ir::Graph& g, int64_t batch) {
  if (batch <= 0) return 0;
  for (const ir::Value* v : g.runtime_inputs())
    if (v->shape().has_rank() && v->shape().rank() > 0 && v->shape()[0].is_known() &&
        v->shape()[0].value == batch)
      return batch;
  return 0;
}

class PlanMemory final : public Pass {
 public:
  static constexpr std::string_view kName = "plan-memory";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    ir::Graph& g = *model.graph;
    const PassOptions& o = ctx.options();
    planner::PlanOptions po;
    po.alignment = o.plan_alignment;
    po.io_in_arena = o.plan_io_in_arena;
    po.workspace_in_arena = o.plan_workspace_in_arena;
    po.batch =
        bound_batch(g, o.plan_batch != 0 ? o.plan_batch : o.shape_bindings.batch.value_or(0));
    auto start = std::chrono::steady_clock::now();
    PlanOutcome out;
    if (!o.shape_ranges.empty()) {
      // A range of shapes: planned at its largest, on copies bound at points of the range, after
      // checking that no value shrinks as the input dims grow (planner/shape_range.h).
      if (o.max_batch_bytes > 0)
        return invalid_argument(
            "a memory budget (--max-batch) and a shape range exclude each other");
      XOPT_ASSIGN_OR_RETURN(out.plan, planner::plan_range(model, o.shape_ranges, po));
    } else if (o.max_batch_bytes > 0) {
      // The search binds the batch dim itself, on copies of the model.
      planner::BatchBudget budget;
      budget.budget_bytes = o.max_batch_bytes;
      budget.parameter_bytes = planner::parameter_bytes(g, po.alignment);
      budget.cuda_context_bytes = po.cuda_context_bytes;
      const planner::PlanAtBatch plan_at = planner::batch_planner(model, po, true);
      XOPT_ASSIGN_OR_RETURN(out.fit, planner::max_batch(budget, plan_at));
      out.batch_searched = true;
      out.budget_bytes = o.max_batch_bytes;
      if (out.fit.batch == 0)
        return invalid_argument(
            "--max-batch: not even batch 1 fits in " + std::to_string(o.max_batch_bytes) +
            " bytes (batch 1 needs " +
            std::to_string(out.fit.probes.empty() ? 0 : out.fit.probes.front().total_bytes) +
            " bytes)");
      auto next = plan_at(out.fit.batch + 1);
      if (next.is_ok()) {
        out.has_next = true;
        out.next_plan = std::move(*next);
        out.next_total_bytes =
            planner::footprint(out.next_plan, budget.parameter_bytes, budget.cuda_context_bytes);
      }
      XOPT_RETURN_IF_ERROR(planner::rebind_batch(g, out.fit.batch, true));
      po.batch = out.fit.batch;
      out.fit.plan = planner::MemoryPlan();
    } else {
      XOPT_RETURN_IF_ERROR(check_static(g));
    }
    if (o.shape_ranges.empty()) {
      XOPT_ASSIGN_OR_RETURN(out.plan, planner::plan(g, po));
    }
    // The input model's naive figure holds at the batch it was measured at only.
    if (!out.batch_searched) out.plan.input_naive_bytes = o.input_naive_bytes;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    planner::write_plan(model, out.plan);
    ctx.count("arena-bytes", static_cast<int64_t>(out.plan.arena_bytes));
    ctx.count("values", static_cast<int64_t>(out.plan.values.size()));
    ctx.plan_outcome() = std::move(out);
    return true;
  }

 private:
  // The first value the planner would need a size for and that has none, named with its producer.
  static Status check_static(const ir::Graph& g) {
    auto check = [](const ir::Value* v, const ir::Node* producer) -> Status {
      if (v == nullptr || !v->is_tensor() || v->shape().numel()) return Status::ok();
      return invalid_argument(
          "plan-memory needs static shapes: value '" + v->name() + "'" +
          (producer != nullptr ? " (output of " + producer->describe() + ")" : " (graph input)") +
          " has shape " + v->shape().to_string() +
          "; bind the symbolic dims with --input-shape NAME=DIMS or --batch N");
    };
    for (const ir::Value* v : g.runtime_inputs()) XOPT_RETURN_IF_ERROR(check(v, nullptr));
    for (const ir::Node* n : g.nodes())
      for (const ir::Value* v : n->outputs()) XOPT_RETURN_IF_ERROR(check(v, n));
    return Status::ok();
  }
};

}  // namespace

XOPT_REGISTER_PASS(PlanMemory,
                   "plans every activation into one arena and records the plan in the model's "
                   "metadata (needs static shapes)",
                   {{"plan", 50}});

}  // namespace xopt::passes
