#include "passes/precision/split_fused_conv.h"

#include <string>
#include <vector>

namespace xopt::passes {
namespace {

bool is_fused_conv(const ir::Node& n) {
  return n.domain() == "com.microsoft" && n.op_type() == "FusedConv" && n.num_outputs() == 1 &&
         n.output(0) != nullptr;
}

bool splittable_activation(const std::string& a) {
  return a.empty() || a == "Relu" || a == "Sigmoid" || a == "Tanh" || a == "LeakyRelu" ||
         a == "HardSigmoid" || a == "Clip";
}

ir::Value* scalar_initializer(ir::Graph& g, const std::string& name, float v) {
  ir::Tensor t(ir::DType::kFloat, {});
  *t.mutable_data<float>() = v;
  return g.add_initializer(name, std::move(t));
}

// A node before `fused` that stands for it, reading `inputs`, with one output shaped like the
// fused node's result.
ir::Node* add_step(ir::Graph& g, ir::Node& fused, const std::string& op,
                   const std::vector<ir::Value*>& inputs, const std::string& suffix) {
  const ir::Value* result = fused.output(0);
  ir::Node* n = g.add_node(op, inputs, {result->name() + suffix}, "", &fused);
  n->set_name(
      g.unique_name(fused.name().empty() ? result->name() + suffix : fused.name() + suffix));
  n->output(0)->set_dtype(result->dtype());
  n->output(0)->set_shape(result->shape());
  n->add_provenance(fused);
  return n;
}

// Gives each step back the originals it stands for. A fusion records its chain in graph order
// (Conv, [BatchNormalization], [Add], activation), so the activation takes the last original, the
// Add the one before and the Conv the rest; a fused node that stands for fewer originals than it
// splits into (one that came in fused) leaves every step standing for all of them.
void share_provenance(ir::Node& conv, ir::Node* add, ir::Node* act) {
  std::vector<std::string> rest = conv.provenance();
  const size_t tail = (add != nullptr ? 1 : 0) + (act != nullptr ? 1 : 0);
  if (rest.size() <= tail) return;
  if (act != nullptr) {
    act->set_provenance({rest.back()});
    rest.pop_back();
  }
  if (add != nullptr) {
    add->set_provenance({rest.back()});
    rest.pop_back();
  }
  conv.set_provenance(std::move(rest));
}

void split(ir::Graph& g, ir::Node& fused) {
  const std::string activation = fused.attr_string("activation", "");
  const std::vector<float> params = fused.has_attr("activation_params")
                                        ? fused.attr_floats("activation_params")
                                        : std::vector<float>{};
  std::vector<ir::Value*> conv_inputs;
  for (size_t i = 0; i < std::min<size_t>(3, fused.num_inputs()); ++i)
    conv_inputs.push_back(fused.input(i));
  while (!conv_inputs.empty() && conv_inputs.back() == nullptr) conv_inputs.pop_back();
  ir::Node* conv = add_step(g, fused, "Conv", conv_inputs, "_conv");
  for (const auto& a : fused.attributes())
    if (a.name() != "activation" && a.name() != "activation_params") conv->set_attr(a);
  ir::Value* last = conv->output(0);
  ir::Node* add = nullptr;
  ir::Node* act = nullptr;
  if (fused.num_inputs() > 3 && fused.input(3) != nullptr) {
    add = add_step(g, fused, "Add", {last, fused.input(3)}, "_add");
    last = add->output(0);
  }
  if (!activation.empty()) {
    std::vector<ir::Value*> in = {last};
    const std::string base = fused.output(0)->name();
    if (activation == "Clip") {
      in.push_back(scalar_initializer(g, base + "_min", params.size() > 0 ? params[0] : -3.4e38f));
      in.push_back(scalar_initializer(g, base + "_max", params.size() > 1 ? params[1] : 3.4e38f));
    }
    act = add_step(g, fused, activation, in, "_act");
    if (activation == "LeakyRelu") act->set_attr("alpha", params.empty() ? 0.01f : params[0]);
    if (activation == "HardSigmoid") {
      act->set_attr("alpha", params.size() > 0 ? params[0] : 0.2f);
      act->set_attr("beta", params.size() > 1 ? params[1] : 0.5f);
    }
    last = act->output(0);
  }
  share_provenance(*conv, add, act);
  ir::Value* result = fused.output(0);
  const std::string name = result->name();
  const std::string node_name = fused.name();
  g.replace_all_uses(result, last);
  g.remove_node(&fused);
  g.rename_value(last, name);
  conv->set_name(node_name.empty() ? conv->name() : node_name);
}

}  // namespace

int64_t split_fused_convs(ir::Graph& g) {
  std::vector<ir::Node*> todo;
  for (ir::Node* n : g.nodes())
    if (is_fused_conv(*n) && splittable_activation(n->attr_string("activation", "")))
      todo.push_back(n);
  for (ir::Node* n : todo) split(g, *n);
  return static_cast<int64_t>(todo.size());
}

}  // namespace xopt::passes
