#include "passes/fuse/opset_upgrade.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "onnx/defs/schema.h"
#include "passes/fuse/fuse_util.h"

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

// The libonnx we build against (1.12) knows schemas up to opset 17. The versions 18 to 22 that
// an op of an older model crosses, from ONNX's Changelog.md: kSame for new types (bfloat16 at 22,
// float8 and 4-bit types at 19 to 21) and new attributes or optional inputs whose defaults are the
// old behaviour (Pad's axes, Resize's antialias, AveragePool's dilations, Cast's saturate, ...);
// kRewrite where upgrade_default_opset respells the node. An op not listed has no version past 17
// (up to 22): it crosses unchanged.
enum class Change { kSame, kRewrite };
struct NewerVersion {
  const char* op;
  int version;
  Change change;
};
constexpr int kMaxTarget = 22;

const std::vector<NewerVersion>& newer_versions() {
  static const std::vector<NewerVersion> k = [] {
    std::vector<NewerVersion> v;
    auto add = [&](int version, Change c, std::initializer_list<const char*> ops) {
      for (const char* op : ops) v.push_back({op, version, c});
    };
    add(18, Change::kSame,
        {"Pad", "Resize", "ScatterElements", "ScatterND", "LpPool", "OptionalGetElement",
         "OptionalHasElement"});
    add(18, Change::kRewrite,
        {"Split", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"});
    add(19, Change::kSame,
        {"AveragePool", "Cast", "CastLike", "Constant", "DequantizeLinear", "Equal", "Identity",
         "Pad", "QuantizeLinear", "Reshape", "Resize", "Shape", "Size"});
    add(20, Change::kSame, {"ConstantOfShape", "IsInf", "IsNaN", "ReduceMax", "ReduceMin"});
    add(20, Change::kRewrite, {"DFT", "GridSample"});
    add(21, Change::kSame,
        {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten",
         "Identity", "Pad", "QLinearMatMul", "QuantizeLinear", "Reshape", "Shape", "Size",
         "Squeeze", "Transpose", "Unsqueeze"});
    add(21, Change::kRewrite, {"GroupNormalization"});
    add(22, Change::kSame,
        {"Acos",
         "Acosh",
         "Asin",
         "Asinh",
         "Atan",
         "Atanh",
         "AveragePool",
         "Bernoulli",
         "Conv",
         "ConvTranspose",
         "Cos",
         "Cosh",
         "DeformConv",
         "Det",
         "Dropout",
         "Elu",
         "EyeLike",
         "GRU",
         "GlobalAveragePool",
         "GlobalLpPool",
         "GlobalMaxPool",
         "HardSigmoid",
         "HardSwish",
         "InstanceNormalization",
         "LSTM",
         "LpNormalization",
         "LpPool",
         "MaxPool",
         "MaxRoiPool",
         "MaxUnpool",
         "Mish",
         "Multinomial",
         "NegativeLogLikelihoodLoss",
         "RNN",
         "RandomNormal",
         "RandomNormalLike",
         "RandomUniform",
         "RandomUniformLike",
         "RoiAlign",
         "Round",
         "Selu",
         "Sin",
         "Sinh",
         "Softplus",
         "Softsign",
         "Tan",
         "ThresholdedRelu"});
    return v;
  }();
  return k;
}

// Ops new at 18 to 20 (libonnx has no schema for them): a model of at least that opset may hold
// them.
int introduced_after_17(const std::string& op) {
  static const std::map<std::string, int> k = {
      {"BitwiseAnd", 18},         {"BitwiseNot", 18},    {"BitwiseOr", 18},
      {"BitwiseXor", 18},         {"CenterCropPad", 18}, {"Col2Im", 18},
      {"GroupNormalization", 18}, {"Mish", 18},          {"DeformConv", 19},
      {"AffineGrid", 20},         {"Gelu", 20},          {"ImageDecoder", 20},
      {"RegexFullMatch", 20},     {"StringConcat", 20},  {"StringSplit", 20}};
  auto it = k.find(op);
  return it == k.end() ? 0 : it->second;
}

// Reduce ops whose `axes` attribute became an input at 18 (ReduceSum did at 13).
bool reduce_axes_input_at_18(const std::string& op) {
  return op.rfind("Reduce", 0) == 0 && op != "ReduceSum";
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

// Why crossing versions (from, target] past 17 changes what `n` computes, or "".
std::string newer_change_blocks(const ir::Node& n, int64_t from, int64_t target) {
  const std::string& op = n.op_type();
  for (int v = std::max<int>(18, static_cast<int>(from) + 1); v <= target; ++v) {
    for (const NewerVersion& nv : newer_versions()) {
      if (nv.version != v || op != nv.op || nv.change == Change::kSame) continue;
      if (op == "GroupNormalization") {
        // Opset 21 takes scale and bias per channel instead of per group.
        const ir::Value* x = n.input(0);
        const bool constant = n.num_inputs() >= 3 && n.input(1) != nullptr &&
                              n.input(2) != nullptr && n.input(1)->is_initializer() &&
                              n.input(2)->is_initializer();
        if (!constant)
          return "its scale and bias are not initializers (opset 21 takes them per "
                 "channel)";
        if (!x->shape().has_rank() || x->shape().rank() < 2 || !x->shape()[1].is_known())
          return "its channel count is unknown (opset 21 takes scale and bias per channel)";
      }
    }
  }
  return "";
}

bool has_subgraph(const ir::Node& n) {
  for (const auto& a : n.attributes())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return true;
  return false;
}

}  // namespace

bool takes_bfloat16_from_22(const std::string& op) {
  static const std::set<std::string> kGenerators = {
      "Bernoulli",        "EyeLike",       "Multinomial",       "RandomNormal",
      "RandomNormalLike", "RandomUniform", "RandomUniformLike", "NegativeLogLikelihoodLoss"};
  if (kGenerators.count(op) != 0) return false;
  for (const NewerVersion& nv : newer_versions())
    if (nv.version == 22 && op == nv.op) return true;
  return false;
}

std::string opset_upgrade_blocker(const ir::Model& model, int64_t target) {
  const ir::Graph& g = *model.graph;
  const int64_t from = g.opset("");
  if (from >= target) return "";
  if (from < kMinSource) return "the model's opset " + std::to_string(from) + " is below 11";
  if (target > kMaxTarget)
    return "xopt raises opsets up to " + std::to_string(kMaxTarget) + ", not " +
           std::to_string(target);
  if (model.shell.functions_size() > 0) return "the model has local functions";
  for (const ir::Node* n : g.nodes()) {
    if (!n->domain().empty() && n->domain() != "ai.onnx") continue;
    const std::string who = "node '" + n->name() + "' (" + n->op_type() + ")";
    if (has_subgraph(*n)) return who + " has a subgraph";
    const int since = introduced_after_17(n->op_type());
    if (since == 0 || since > from) {
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
        if (!why.empty()) return who + ": " + std::move(why);
      }
    }
    std::string why = newer_change_blocks(*n, from, target);
    if (!why.empty()) return who + ": " + std::move(why);
  }
  return "";
}

namespace {

ir::Value* int64_initializer(ir::Graph& g, const std::string& name, std::vector<int64_t> dims,
                             const std::vector<int64_t>& values) {
  ir::Tensor t(ir::DType::kInt64, std::move(dims));
  std::copy(values.begin(), values.end(), t.mutable_data<int64_t>());
  return g.add_initializer(name, std::move(t));
}

// An attribute that became input `index` (Squeeze's axes at 13, ReduceMean's at 18, ...).
void move_attribute_to_input(ir::Graph& g, ir::Node& n, const char* attr, size_t index) {
  if (!n.has_attr(attr)) return;
  const std::vector<int64_t> values = n.attr_ints(attr);
  n.remove_attr(attr);
  n.set_input(index, int64_initializer(g, n.output(0)->name() + "_" + attr,
                                       {static_cast<int64_t>(values.size())}, values));
}

// Opset 21's GroupNormalization: scale and bias of one value per channel (each group's repeated
// over its channels) instead of per group.
void group_norm_per_channel(ir::Graph& g, ir::Node& n) {
  const int64_t channels = n.input(0)->shape()[1].value;
  for (size_t i = 1; i <= 2; ++i) {
    const ir::Tensor& per_group = *n.input(i)->initializer();
    const int64_t groups = per_group.numel();
    if (groups <= 0 || channels % groups != 0) continue;  // inference already refused it
    ir::Tensor per_channel(per_group.dtype(), {channels});
    const size_t elem = ir::dtype_size(per_group.dtype());
    const auto* src = static_cast<const uint8_t*>(per_group.raw_data());
    auto* dst = static_cast<uint8_t*>(per_channel.mutable_raw_data());
    for (int64_t c = 0; c < channels; ++c)
      std::memcpy(dst + c * elem, src + (c / (channels / groups)) * elem, elem);
    ir::Value* old = n.input(i);
    n.set_input(i, g.add_initializer(old->name() + "_per_channel", std::move(per_channel)));
    drop_if_unused(g, old);
  }
}

// The IR version an opset shipped with (onnx/helper.py's VERSION_TABLE).
int64_t ir_version_of(int64_t opset) {
  if (opset >= 23) return 11;
  if (opset >= 21) return 10;
  if (opset >= 19) return 9;
  if (opset >= 15) return 8;
  return 7;
}

}  // namespace

void upgrade_default_opset(ir::Model& model, int64_t target) {
  ir::Graph& g = *model.graph;
  const int64_t from = g.opset("");
  if (from >= target) return;
  auto crosses = [&](int64_t v) { return from < v && target >= v; };
  for (ir::Node* n : g.node_list()) {
    if (!n->domain().empty() && n->domain() != "ai.onnx") continue;
    const std::string& op = n->op_type();
    if (crosses(13) && is_softmax_family(op)) {
      n->set_attr("axis", int64_t{-1});
    } else if (crosses(13) && attribute_to_input(op) != nullptr) {
      move_attribute_to_input(g, *n, attribute_to_input(op), 1);
    } else if (crosses(12) && op == "Dropout") {
      n->remove_attr("ratio");
    }
    if (crosses(18) && reduce_axes_input_at_18(op)) move_attribute_to_input(g, *n, "axes", 1);
    // Split 18 wants num_outputs where no `split` input gives the sizes (equal parts either way).
    if (crosses(18) && op == "Split" && (n->num_inputs() < 2 || n->input(1) == nullptr))
      n->set_attr("num_outputs", static_cast<int64_t>(n->num_outputs()));
    if (crosses(20) && op == "GridSample" && n->has_attr("mode")) {
      const std::string mode = n->attr_string("mode", "bilinear");
      if (mode == "bilinear") n->set_attr("mode", std::string("linear"));
      if (mode == "bicubic") n->set_attr("mode", std::string("cubic"));
    }
    if (crosses(20) && op == "DFT") {
      // The axis attribute (default 1) became input 2 (default -2).
      const int64_t axis = n->attr_int("axis", 1);
      n->remove_attr("axis");
      if (n->num_inputs() < 2) n->set_input(1, nullptr);
      n->set_input(2, int64_initializer(g, n->output(0)->name() + "_axis", {}, {axis}));
    }
    if (crosses(21) && op == "GroupNormalization") group_norm_per_channel(g, *n);
  }
  g.require_opset("", target);
  const int64_t ir_version = ir_version_of(target);
  if (model.shell.ir_version() < ir_version) model.shell.set_ir_version(ir_version);
}

}  // namespace xopt::passes::fuse
