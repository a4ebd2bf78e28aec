#include "viz/op_family.h"

#include <string_view>
#include <unordered_map>

namespace xopt::viz {
namespace {

// ColorBrewer "Set3"-like pastels: dark text stays readable on every one of them.
const std::vector<OpFamily>& families() {
  static const std::vector<OpFamily> f = {
      {"convolution", "#8dd3c7"},   {"matmul / gemm", "#80b1d3"},  {"attention", "#bebada"},
      {"normalization", "#fdb462"}, {"activation", "#fb8072"},     {"elementwise", "#ffffb3"},
      {"pool / reduce", "#b3de69"}, {"layout / shape", "#fccde5"}, {"constant", "#eeeeee"},
      {"other", "#d9d9d9"},
  };
  return f;
}

const std::unordered_map<std::string_view, int>& table() {
  static const std::unordered_map<std::string_view, int> t = [] {
    std::unordered_map<std::string_view, int> m;
    auto add = [&](int family, std::initializer_list<std::string_view> ops) {
      for (auto op : ops) m.emplace(op, family);
    };
    add(0, {"Conv", "ConvTranspose", "FusedConv", "ConvInteger", "QLinearConv", "NhwcConv"});
    add(1,
        {"MatMul", "Gemm", "FusedGemm", "MatMulInteger", "QLinearMatMul", "FusedMatMul", "Einsum"});
    add(2, {"Attention", "MultiHeadAttention", "GroupQueryAttention", "PackedAttention"});
    add(3, {"BatchNormalization", "LayerNormalization", "SkipLayerNormalization",
            "InstanceNormalization", "GroupNormalization", "SimplifiedLayerNormalization",
            "SkipSimplifiedLayerNormalization", "RMSNormalization", "LpNormalization"});
    add(4, {"Relu",     "LeakyRelu", "PRelu",    "Sigmoid",    "Tanh", "Gelu",        "FastGelu",
            "BiasGelu", "QuickGelu", "Softmax",  "LogSoftmax", "Clip", "HardSigmoid", "HardSwish",
            "Elu",      "Selu",      "Softplus", "Mish",       "Erf",  "BiasSoftmax", "Swish"});
    add(5, {"Add",    "Sub",   "Mul",   "Div",        "Pow",     "Sqrt",        "Exp",
            "Log",    "Neg",   "Abs",   "Reciprocal", "Min",     "Max",         "Sum",
            "Mean",   "Where", "Equal", "Less",       "Greater", "LessOrEqual", "GreaterOrEqual",
            "Not",    "And",   "Or",    "Xor",        "Cast",    "Floor",       "Ceil",
            "Round",  "Sign",  "Mod",   "IsNaN",      "IsInf",   "BiasAdd",     "Identity",
            "Dropout"});
    add(6, {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean",
            "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare",
            "ArgMax", "ArgMin", "TopK", "LpPool"});
    add(7, {"Reshape",   "Transpose",       "Flatten",  "Squeeze",      "Unsqueeze",
            "Concat",    "Split",           "Slice",    "Gather",       "GatherElements",
            "GatherND",  "Shape",           "Size",     "Expand",       "Tile",
            "Pad",       "Resize",          "Upsample", "DepthToSpace", "SpaceToDepth",
            "ScatterND", "ScatterElements", "Range",    "NonZero",      "CumSum",
            "Trilu",     "OneHot"});
    add(8, {"Constant", "ConstantOfShape"});
    return m;
  }();
  return t;
}

}  // namespace

const std::vector<OpFamily>& op_families() {
  return families();
}

const OpFamily& op_family(const std::string& op_type) {
  auto it = table().find(op_type);
  return families()[it == table().end() ? families().size() - 1 : it->second];
}

const OpFamily& io_family() {
  static const OpFamily io{"graph input / output", "#ffffff"};
  return io;
}

const OpFamily& workspace_family() {
  static const OpFamily ws{"node workspace", "#c8c8c8"};
  return ws;
}

}  // namespace xopt::viz
