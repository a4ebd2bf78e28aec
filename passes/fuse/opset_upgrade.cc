#include "passes/fuse/opset_upgrade.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "onnx/defs/schema.h"

namespace xopt::passes::fuse {
namespace {

constexpr int64_t kMinSource = 11;

// Schema versions after 11 (up to 17) a node crosses without noticing: added types (bfloat16 at
// 13, small integers at 12/14/16, ...), or attributes and optional inputs whose defaults keep the
// old behaviour (ArgMax select_last_index, GatherND batch_dims, Reshape allowzero, Shape start/end,
// RNN layout, Scatter reduction, Resize's optional roi and scales, DequantizeLinear axis, ...).
const std::map<std::string, std::set<int>>& type_only_changes() {
  static const std::map<std::string, std::set<int>> k = {
      {"Abs", {13}},
      {"Add", {13, 14}},
      {"ArgMax", {12, 13}},
      {"ArgMin", {12, 13}},
      {"BatchNormalization", {15}},
      {"Cast", {13}},
      {"Ceil", {13}},
      {"Clip", {12, 13}},
      {"Concat", {13}},
      {"Constant", {12, 13}},
      {"CumSum", {14}},
      {"DepthToSpace", {13}},
      {"DequantizeLinear", {13}},
      {"Div", {13, 14}},
      {"Dropout", {13}},
      {"Equal", {13}},
      {"Erf", {13}},
      {"Exp", {13}},
      {"Expand", {13}},
      {"Flatten", {13}},
      {"Floor", {13}},
      {"GRU", {14}},
      {"Gather", {13}},
      {"GatherElements", {13}},
      {"GatherND", {12, 13}},
      {"Gemm", {13}},
      {"Greater", {13}},
      {"GreaterOrEqual", {16}},
      {"Identity", {13, 14, 16}},
      {"IsNaN", {13}},
      {"LRN", {13}},
      {"LSTM", {14}},
      {"LeakyRelu", {16}},
      {"Less", {13}},
      {"LessOrEqual", {16}},
      {"Log", {13}},
      {"MatMul", {13}},
      {"Max", {12, 13}},
      {"MaxPool", {12}},
      {"Mean", {13}},
      {"MeanVarianceNormalization", {13}},
      {"Min", {12, 13}},
      {"Mod", {13}},
      {"Mul", {13, 14}},
      {"Neg", {13}},
      {"NonZero", {13}},
      {"PRelu", {16}},
      {"Pad", {13}},
      {"Pow", {12, 13, 15}},
      {"QuantizeLinear", {13}},
      {"RNN", {14}},
      {"Reciprocal", {13}},
      {"ReduceL1", {13}},
      {"ReduceL2", {13}},
      {"ReduceLogSum", {13}},
      {"ReduceLogSumExp", {13}},
      {"ReduceMax", {12, 13}},
      {"ReduceMean", {13}},
      {"ReduceMin", {12, 13}},
      {"ReduceProd", {13}},
      {"ReduceSumSquare", {13}},
      {"Relu", {13, 14}},
      {"Reshape", {13, 14}},
      {"Resize", {13}},
      {"ScatterElements", {13, 16}},
      {"ScatterND", {13, 16}},
      {"Shape", {13, 15}},
      {"Sigmoid", {13}},
      {"Sign", {13}},
      {"Size", {13}},
      {"Slice", {13}},
      {"SpaceToDepth", {13}},
      {"Sqrt", {13}},
      {"Sub", {13, 14}},
      {"Sum", {13}},
      {"Tanh", {13}},
      {"Tile", {13}},
      {"Transpose", {13}},
      {"Where", {16}},
  };
  return k;
}

// Opset 13 turned these attributes into inputs.
const char* attribute_to_input(const std::string& op) {
  if (op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") return "axes";
  if (op == "Split") return "split";
  return nullptr;
}

bool is_softmax_family(const std::string& op) {
  return op == "Softmax" || op == "LogSoftmax" || op == "Hardmax";
}

// Why crossing schema version `v` changes what `n` computes, or "" when it does not (after the
// rewrite upgrade_default_opset does).
std::string change_blocks(const ir::Node& n, int v) {
  const std::string& op = n.op_type();
  auto it = type_only_changes().find(op);
  if (it != type_only_changes().end() && it->second.count(v) != 0) return "";
  if (v == 13 && attribute_to_input(op) != nullptr) return "";
  if (v == 13 && is_softmax_family(op)) {
    // Before 13 the input is coerced to 2-D at `axis` (default 1); over the last axis only, that
    // is the per-axis op of 13.
    const ir::Shape& s = n.input(0)->shape();
    if (!s.has_rank()) return "its input's rank is unknown";
    const auto rank = static_cast<int64_t>(s.rank());
    int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    return axis == rank - 1 ? "" : "it does not work over the last axis";
  }
  if (v == 14 && op == "BatchNormalization")
    return n.num_outputs() == 1 ? "" : "it has training outputs";
  if (v == 12 && op == "Dropout") return "";  // ratio matters in training only
  return "its schema changed at opset " + std::to_string(v);
}

bool has_subgraph(const ir::Node& n) {
  for (const auto& a : n.attributes())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return true;
  return false;
}

}  // namespace

std::string opset_upgrade_blocker(const ir::Model& model, int64_t target) {
  const ir::Graph& g = *model.graph;
  const int64_t from = g.opset("");
  if (from >= target) return "";
  if (from < kMinSource) return "the model's opset " + std::to_string(from) + " is below 11";
  if (model.shell.functions_size() > 0) return "the model has local functions";
  for (const ir::Node* n : g.nodes()) {
    if (!n->domain().empty() && n->domain() != "ai.onnx") continue;
    const std::string who = "node '" + n->name() + "' (" + n->op_type() + ")";
    if (has_subgraph(*n)) return who + " has a subgraph";
    const onnx::OpSchema* old_s =
        onnx::OpSchemaRegistry::Schema(n->op_type(), static_cast<int>(from), "");
    const onnx::OpSchema* new_s =
        onnx::OpSchemaRegistry::Schema(n->op_type(), static_cast<int>(target), "");
    if (old_s == nullptr || new_s == nullptr || new_s->Deprecated())
      return who + " has no schema at opset " + std::to_string(target);
    for (int v = old_s->SinceVersion() + 1; v <= new_s->SinceVersion(); ++v) {
      const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n->op_type(), v, "");
      if (s == nullptr || s->SinceVersion() != v) continue;
      std::string why = change_blocks(*n, v);
      if (!why.empty()) return who + ": " + why;
    }
  }
  return "";
}

void upgrade_default_opset(ir::Model& model, int64_t target) {
  ir::Graph& g = *model.graph;
  const int64_t from = g.opset("");
  if (from >= target) return;
  for (ir::Node* n : g.node_list()) {
    if (!n->domain().empty() && n->domain() != "ai.onnx") continue;
    const std::string& op = n->op_type();
    if (from < 13 && target >= 13 && is_softmax_family(op)) {
      n->set_attr("axis", int64_t{-1});
    } else if (from < 13 && target >= 13 && attribute_to_input(op) != nullptr &&
               n->has_attr(attribute_to_input(op))) {
      const char* attr = attribute_to_input(op);
      const std::vector<int64_t> values = n->attr_ints(attr);
      ir::Tensor t(ir::DType::kInt64, {static_cast<int64_t>(values.size())});
      std::copy(values.begin(), values.end(), t.mutable_data<int64_t>());
      n->remove_attr(attr);
      n->set_input(1, g.add_initializer(n->output(0)->name() + "_" + attr, std::move(t)));
    } else if (from < 12 && target >= 12 && op == "Dropout") {
      n->remove_attr("ratio");
    }
  }
  g.require_opset("", target);
  // The IR version each opset shipped with: 7 for opset 13 and 14, 8 for 15 to 18.
  const int64_t ir_version = target >= 15 ? 8 : 7;
  if (model.shell.ir_version() < ir_version) model.shell.set_ir_version(ir_version);
}

}  // namespace xopt::passes::fuse
