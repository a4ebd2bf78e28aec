// MatMul(A, B) -> Add(., c), A and B 2-D, c broadcasting to [N] or [M, N] without growing the
// result  ==>  Gemm(A, B, c).
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/pass_registry.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using fuse::sole_reader;

// `d` is 1 or equal to `target` (same value or same symbol).
bool broadcasts_to(const ir::Dim& d, const ir::Dim& target) {
  if (d.is_known() && d.value == 1) return true;
  if (d.is_known()) return target.is_known() && target.value == d.value;
  return d.is_symbolic() && target.is_symbolic() && d.symbol == target.symbol;
}

bool gemm_type(ir::DType t) {
  return t == ir::DType::kFloat || t == ir::DType::kDouble || t == ir::DType::kFloat16;
}

class FuseMatMulAdd final : public Pass {
 public:
  static constexpr std::string_view kName = "fuse-matmul-add";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    if (g.opset("") < 7) return false;  // Gemm broadcasts C unidirectionally from opset 7 on
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    bool changed = false;
    std::unordered_set<const ir::Node*> removed;
    for (ir::Node* add : g.node_list()) {
      if (removed.count(add) || !is_onnx_op(*add, "Add") || add->num_inputs() != 2) continue;
      for (size_t i = 0; i < 2; ++i) {
        ir::Value* y = add->input(i);
        ir::Value* c = add->input(1 - i);
        ir::Node* mm = y == nullptr ? nullptr : y->producer();
        if (mm == nullptr || c == nullptr || !is_onnx_op(*mm, "MatMul") || sole_reader(y) != add)
          continue;
        const ir::Shape& as = mm->input(0)->shape();
        const ir::Shape& bs = mm->input(1)->shape();
        const ir::Shape& cs = c->shape();
        if (!as.has_rank() || as.rank() != 2 || !bs.has_rank() || bs.rank() != 2) continue;
        if (!cs.has_rank() || cs.rank() > 2 || !gemm_type(y->dtype()) || c->dtype() != y->dtype())
          continue;
        // c right-aligned against [M, N].
        const ir::Dim& m = as[0];
        const ir::Dim& n = bs[1];
        bool fits = cs.rank() == 0 || broadcasts_to(cs[cs.rank() - 1], n);
        if (cs.rank() == 2) fits = fits && broadcasts_to(cs[0], m);
        if (!fits) continue;
        fuse::replace_chain(g, "Gemm", "", {mm->input(0), mm->input(1), c}, {}, add->output(0),
                            {mm, add}, add, removed);
        ctx.count(kName);
        changed = true;
        break;
      }
    }
    return changed;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseMatMulAdd, "turns 2-D MatMul + bias Add into Gemm", {{"fuse", 40}});

}  // namespace xopt::passes
