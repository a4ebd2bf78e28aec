// Memory-aware node order: a topological order that lowers the peak of live activation bytes
// (planner/reorder.h), kept only when the arena planned for it is smaller than the arena planned
// for the graph's own order. The graph's node list is rearranged to that order.
//
// Does not apply (returns false) when a value has no static size: plan-memory reports that.
#include <vector>

#include "passes/pass_registry.h"
#include "planner/planner.h"
#include "planner/reorder.h"

namespace xopt::passes {
namespace {

class Reorder final : public Pass {
 public:
  static constexpr std::string_view kName = "reorder";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    ir::Graph& g = *model.graph;
    planner::PlanOptions po;
    po.alignment = ctx.options().plan_alignment;
    po.io_in_arena = ctx.options().plan_io_in_arena;
    auto original = planner::plan(g, po);
    if (!original.is_ok()) {
      // Unknown sizes (or non-tensor values): nothing to order by; plan-memory says why.
      ctx.count("skipped-not-static");
      return false;
    }
    XOPT_ASSIGN_OR_RETURN(planner::Reordering r,
                          planner::memory_aware_order(g, {po.alignment, po.io_in_arena}));
    if (r.method == "original") return false;
    XOPT_ASSIGN_OR_RETURN(planner::MemoryPlan reordered, planner::plan(g, r.order, po));
    if (reordered.arena_bytes >= original->arena_bytes) {
      ctx.count("kept-original-order");
      return false;
    }
    // Moving each node to the end in the new order leaves the list in exactly that order.
    std::vector<ir::Node*> before = g.node_list();
    bool moved = false;
    for (size_t i = 0; i < r.order.size(); ++i) {
      ir::Node* n = const_cast<ir::Node*>(r.order[i]);
      if (n != before[i]) moved = true;
      g.move_node(n, nullptr);
    }
    if (!moved) return false;
    ctx.count("arena-bytes-saved",
              static_cast<int64_t>(original->arena_bytes - reordered.arena_bytes));
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(Reorder,
                   "orders the nodes to lower peak activation memory, when that shrinks the "
                   "planned arena",
                   {{"plan", 10}});

}  // namespace xopt::passes
