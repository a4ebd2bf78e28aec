// Conv(x, W, b) [-> Add(., z), z of the conv result's shape] -> Relu | Clip | LeakyRelu | Sigmoid
// | HardSigmoid | Tanh  ==>  com.microsoft.FusedConv(x, W, b, z) <activation, activation_params>,
// onnxruntime's fused op computing act(conv(x) + b + z).
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/pass_registry.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using fuse::sole_reader;

// A Conv whose only reader is `reader`, or nullptr.
ir::Node* conv_read_only_by(const ir::Value* v, const ir::Node* reader) {
  ir::Node* conv = v == nullptr ? nullptr : v->producer();
  if (conv == nullptr || !is_onnx_op(*conv, "Conv") || conv->num_outputs() != 1) return nullptr;
  return sole_reader(v) == reader ? conv : nullptr;
}

// Same rank and every dim known-equal or the same symbol.
bool same_shape(const ir::Shape& a, const ir::Shape& b) {
  if (!a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i) {
    const ir::Dim &x = a[i], &y = b[i];
    if (x.is_known() ? !(y.is_known() && x.value == y.value)
                     : !(x.is_symbolic() && y.is_symbolic() && x.symbol == y.symbol))
      return false;
  }
  return true;
}

class FuseConvActivation final : public Pass {
 public:
  static constexpr std::string_view kName = "fuse-conv-activation";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    bool changed = false;
    std::unordered_set<const ir::Node*> removed;
    for (ir::Node* act : g.node_list()) {
      if (removed.count(act)) continue;
      auto activation = fuse::match_activation(*act);
      if (!activation || !activation->conv) continue;
      ir::Value* y = act->input(0);
      ir::Node* conv = conv_read_only_by(y, act);
      ir::Node* add = nullptr;
      ir::Value* z = nullptr;
      if (conv == nullptr) {
        add = y->producer();
        if (add == nullptr || !is_onnx_op(*add, "Add") || add->num_inputs() != 2 ||
            sole_reader(y) != act)
          continue;
        for (size_t i = 0; i < 2 && conv == nullptr; ++i) {
          ir::Node* c = conv_read_only_by(add->input(i), add);
          ir::Value* other = add->input(1 - i);
          if (c == nullptr || other == nullptr || other->dtype() != ir::DType::kFloat ||
              !same_shape(other->shape(), c->output(0)->shape()) ||
              !same_shape(y->shape(), c->output(0)->shape()))
            continue;
          conv = c;
          z = other;
        }
        if (conv == nullptr) continue;
      }
      if (conv->output(0)->dtype() != ir::DType::kFloat) continue;

      std::vector<onnx::AttributeProto> attrs = conv->attributes();
      onnx::AttributeProto a;
      a.set_name("activation");
      a.set_type(onnx::AttributeProto::STRING);
      a.set_s(activation->name);
      attrs.push_back(a);
      if (!activation->params.empty()) {
        onnx::AttributeProto p;
        p.set_name("activation_params");
        p.set_type(onnx::AttributeProto::FLOATS);
        for (float f : activation->params) p.add_floats(f);
        attrs.push_back(p);
      }
      std::vector<ir::Value*> inputs = {conv->input(0), conv->input(1), conv->input(2)};
      if (z != nullptr)
        inputs.push_back(z);
      else if (inputs[2] == nullptr)
        inputs.pop_back();
      std::vector<ir::Node*> chain = {conv};
      if (add != nullptr) chain.push_back(add);
      chain.push_back(act);
      g.require_opset("com.microsoft", 1);
      fuse::replace_chain(g, "FusedConv", "com.microsoft", inputs, attrs, act->output(0), chain,
                          act, removed);
      ctx.count(kName);
      ctx.count(add != nullptr ? activation->name + "+residual" : activation->name);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseConvActivation,
                   "fuses Conv (+ residual Add) + Relu/Clip/LeakyRelu/Sigmoid/HardSigmoid/Tanh "
                   "into com.microsoft.FusedConv",
                   {{"fuse", 30}});

}  // namespace xopt::passes
