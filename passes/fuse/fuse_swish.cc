// Mul(x, Sigmoid(x)) (Swish / SiLU, either operand order)  ==>  com.microsoft.QuickGelu(x) <alpha =
// 1>; Mul(x, Sigmoid(Mul(x, a))), a a scalar constant  ==>  com.microsoft.QuickGelu(x) <alpha = a>.
//
// onnxruntime's QuickGelu computes x * sigmoid(alpha * x); its CPU kernel takes float only, so
// other types keep the two nodes. ONNX has no Swish op before opset 24.
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using fuse::sole_reader;

class FuseSwish final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-swish";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* mul, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    if (!is_onnx_op(*mul, "Mul") || mul->num_inputs() != 2) return false;
    if (mul->output(0)->dtype() != ir::DType::kFloat) return false;
    for (size_t i = 0; i < 2; ++i) {
      ir::Value* x = mul->input(i);
      ir::Value* s = mul->input(1 - i);
      ir::Node* sig = s == nullptr ? nullptr : s->producer();
      if (x == nullptr || sig == nullptr || !is_onnx_op(*sig, "Sigmoid") || sole_reader(s) != mul)
        continue;
      // Both operands have x's shape, so the Mul broadcasts nothing.
      if (!(mul->output(0)->shape() == x->shape())) continue;
      std::vector<ir::Node*> chain{mul, sig};
      double alpha = 1.0;
      if (sig->input(0) != x) {
        // Sigmoid(Mul(x, a)): the scaled form.
        ir::Value* t = sig->input(0);
        ir::Node* scale = t->producer();
        if (scale == nullptr || !is_onnx_op(*scale, "Mul") || sole_reader(t) != sig) continue;
        ir::Value* a = xfmr::other_input(scale, x);
        auto av = a == nullptr ? std::nullopt : xfmr::scalar_constant(a);
        if (!av || !(t->shape() == x->shape())) continue;
        alpha = *av;
        chain.push_back(scale);
      }
      onnx::AttributeProto attr;
      attr.set_name("alpha");
      attr.set_type(onnx::AttributeProto::FLOAT);
      attr.set_f(static_cast<float>(alpha));
      g.require_opset("com.microsoft", 1);
      fuse::replace_chain(g, "QuickGelu", "com.microsoft", {x}, {attr}, mul->output(0), chain, mul,
                          removed);
      ctx.count(alpha == 1.0 ? "Swish" : "QuickGelu");
      return true;
    }
    return false;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseSwish,
                   "fuses x * Sigmoid(x) (Swish/SiLU) and x * Sigmoid(a * x) into "
                   "com.microsoft.QuickGelu",
                   {{"fuse", 25}});

}  // namespace xopt::passes
