// Gemm(A, B, C) -> Relu | LeakyRelu | Sigmoid | HardSigmoid | Tanh | Elu | Selu | ThresholdedRelu
// | Softplus | Softsign  ==>
// com.microsoft.FusedGemm(A, B, C) <activation, activation_alpha, activation_beta>, the
// onnxruntime fused op (which names the activation's attributes with an "activation_" prefix).
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/pass_registry.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using fuse::sole_reader;

class FuseGemmActivation final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-gemm-activation";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* act, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    auto activation = fuse::match_activation(*act);
    if (!activation || !activation->gemm) return false;
    ir::Value* y = act->input(0);
    ir::Node* gemm = y->producer();
    if (gemm == nullptr || !is_onnx_op(*gemm, "Gemm") || sole_reader(y) != act) return false;
    // Before opset 7 Gemm had a `broadcast` attribute FusedGemm does not know.
    if (gemm->opset() < 7 || y->dtype() != ir::DType::kFloat) return false;
    std::vector<onnx::AttributeProto> attrs = gemm->attributes();
    onnx::AttributeProto a;
    a.set_name("activation");
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(activation->name);
    attrs.push_back(a);
    for (const auto& p : activation->gemm_attrs) attrs.push_back(p);
    g.require_opset("com.microsoft", 1);
    fuse::replace_chain(g, "FusedGemm", "com.microsoft", gemm->inputs(), attrs, act->output(0),
                        {gemm, act}, act, removed);
    ctx.count(activation->name);
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseGemmActivation,
                   "fuses Gemm + Relu/LeakyRelu/Sigmoid/HardSigmoid/Tanh/Elu/Selu/"
                   "ThresholdedRelu/Softplus/Softsign into com.microsoft.FusedGemm",
                   {{"fuse", 50}});

}  // namespace xopt::passes
