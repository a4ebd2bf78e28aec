// Conv(x, W, b) [-> Add(., z), z of the conv result's shape] -> Relu | Clip | LeakyRelu | Sigmoid
// | HardSigmoid | Tanh  ==>  com.microsoft.FusedConv(x, W, b, z) <activation, activation_params>,
// onnxruntime's fused op computing act(conv(x) + b + z). A residual Add with no activation after
// it becomes FusedConv(x, W, b, z) without an activation attribute (identity), and such a
// FusedConv later followed by an activation takes the activation in.
#include <optional>
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

// A com.microsoft FusedConv without an activation whose only reader is `reader`, or nullptr.
ir::Node* identity_fused_conv_read_only_by(const ir::Value* v, const ir::Node* reader) {
  ir::Node* fused = v == nullptr ? nullptr : v->producer();
  if (fused == nullptr || fused->domain() != "com.microsoft" || fused->op_type() != "FusedConv" ||
      fused->num_outputs() != 1 || fused->has_attr("activation"))
    return nullptr;
  return sole_reader(v) == reader ? fused : nullptr;
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

// A float32 Conv result that only `add` reads, added to z of exactly its shape: FusedConv's Z must
// have the output's shape, so an Add that broadcasts either side does not match.
struct Residual {
  ir::Node* conv = nullptr;
  ir::Value* z = nullptr;
};
std::optional<Residual> match_residual(ir::Node* add) {
  if (!is_onnx_op(*add, "Add") || add->num_inputs() != 2 || add->num_outputs() != 1)
    return std::nullopt;
  const ir::Value* y = add->output(0);
  for (size_t i = 0; i < 2; ++i) {
    ir::Node* c = conv_read_only_by(add->input(i), add);
    ir::Value* other = add->input(1 - i);
    if (c == nullptr || other == nullptr || other->dtype() != ir::DType::kFloat ||
        c->output(0)->dtype() != ir::DType::kFloat ||
        !same_shape(other->shape(), c->output(0)->shape()) ||
        !same_shape(y->shape(), c->output(0)->shape()))
      continue;
    return Residual{c, other};
  }
  return std::nullopt;
}

// FusedConv's inputs: X, W, B ("" when absent and Z follows) and Z when given.
std::vector<ir::Value*> fused_inputs(const ir::Node& conv, ir::Value* z) {
  std::vector<ir::Value*> inputs = {conv.input(0), conv.input(1), conv.input(2)};
  if (z != nullptr)
    inputs.push_back(z);
  else if (inputs[2] == nullptr)
    inputs.pop_back();
  return inputs;
}

// `attrs` with FusedConv's activation and activation_params appended.
std::vector<onnx::AttributeProto> with_activation(std::vector<onnx::AttributeProto> attrs,
                                                  const fuse::Activation& activation) {
  onnx::AttributeProto a;
  a.set_name("activation");
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(activation.name);
  attrs.push_back(a);
  if (!activation.params.empty()) {
    onnx::AttributeProto p;
    p.set_name("activation_params");
    p.set_type(onnx::AttributeProto::FLOATS);
    for (float f : activation.params) p.add_floats(f);
    attrs.push_back(p);
  }
  return attrs;
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
    for (ir::Node* n : g.node_list()) {
      if (removed.count(n)) continue;
      if (is_onnx_op(*n, "Add")) {
        changed |= fuse_residual(g, n, ctx, removed);
        continue;
      }
      auto activation = fuse::match_activation(*n);
      if (!activation || !activation->conv) continue;
      changed |= fuse_activation(g, n, *activation, ctx, removed) ||
                 absorb_activation(g, n, *activation, ctx, removed);
    }
    return changed;
  }

 private:
  // Conv [-> residual Add] -> act.
  static bool fuse_activation(ir::Graph& g, ir::Node* act, const fuse::Activation& activation,
                              PassContext& ctx, std::unordered_set<const ir::Node*>& removed) {
    ir::Value* y = act->input(0);
    ir::Node* conv = conv_read_only_by(y, act);
    ir::Node* add = nullptr;
    ir::Value* z = nullptr;
    if (conv == nullptr) {
      add = y->producer();
      if (add == nullptr || sole_reader(y) != act) return false;
      auto residual = match_residual(add);
      if (!residual) return false;
      conv = residual->conv;
      z = residual->z;
    }
    if (conv->output(0)->dtype() != ir::DType::kFloat) return false;
    std::vector<ir::Node*> chain = {conv};
    if (add != nullptr) chain.push_back(add);
    chain.push_back(act);
    g.require_opset("com.microsoft", 1);
    fuse::replace_chain(g, "FusedConv", "com.microsoft", fused_inputs(*conv, z),
                        with_activation(conv->attributes(), activation), act->output(0), chain, act,
                        removed);
    ctx.count(kName);
    ctx.count(add != nullptr ? activation.name + "+residual" : activation.name);
    return true;
  }

  // Conv -> residual Add with no fusable activation after it: FusedConv with Z and no activation.
  static bool fuse_residual(ir::Graph& g, ir::Node* add, PassContext& ctx,
                            std::unordered_set<const ir::Node*>& removed) {
    auto residual = match_residual(add);
    if (!residual) return false;
    // An activation reading only the Add takes Conv + Add + act in one step when it is reached.
    if (const ir::Node* next = sole_reader(add->output(0)); next != nullptr) {
      auto activation = fuse::match_activation(*next);
      if (activation && activation->conv) return false;
    }
    g.require_opset("com.microsoft", 1);
    fuse::replace_chain(g, "FusedConv", "com.microsoft", fused_inputs(*residual->conv, residual->z),
                        residual->conv->attributes(), add->output(0), {residual->conv, add}, add,
                        removed);
    ctx.count(kName);
    ctx.count("residual");
    return true;
  }

  // FusedConv without an activation (a residual fused earlier) -> act: the activation goes in.
  static bool absorb_activation(ir::Graph& g, ir::Node* act, const fuse::Activation& activation,
                                PassContext& ctx, std::unordered_set<const ir::Node*>& removed) {
    ir::Node* fused = identity_fused_conv_read_only_by(act->input(0), act);
    if (fused == nullptr || fused->output(0)->dtype() != ir::DType::kFloat) return false;
    const bool has_z = fused->num_inputs() > 3 && fused->input(3) != nullptr;
    const std::vector<ir::Value*> inputs = fused->inputs();  // fused goes away
    fuse::replace_chain(g, "FusedConv", "com.microsoft", inputs,
                        with_activation(fused->attributes(), activation), act->output(0),
                        {fused, act}, act, removed);
    ctx.count(kName);
    ctx.count(has_z ? activation.name + "+residual" : activation.name);
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseConvActivation,
                   "fuses Conv (+ residual Add) + Relu/Clip/LeakyRelu/Sigmoid/HardSigmoid/Tanh, "
                   "and Conv + residual Add alone, into com.microsoft.FusedConv",
                   {{"fuse", 30}});

}  // namespace xopt::passes
