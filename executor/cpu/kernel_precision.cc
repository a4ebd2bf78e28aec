#include "executor/cpu/kernel_precision.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <utility>

namespace xopt::exec {
namespace {

using ir::DType;

// Listing order.
constexpr DType kOrder[] = {
    DType::kDouble,     DType::kFloat,          DType::kFloat16,      DType::kBFloat16,
    DType::kInt8,       DType::kInt16,          DType::kInt32,        DType::kInt64,
    DType::kUInt8,      DType::kUInt16,         DType::kUInt32,       DType::kUInt64,
    DType::kBool,       DType::kString,         DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ,
    DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ, DType::kFloat8E8M0,   DType::kFloat4E2M1,
    DType::kInt4,       DType::kUInt4,          DType::kInt2,         DType::kUInt2,
};

using Key = std::pair<std::string, std::string>;  // (domain, op); "" for ONNX

// What the reducing kernels accumulate in for float16/bfloat16 inputs, read from each kernel (the
// file named) and checked by tests/lowp where marked (*).
const std::map<Key, std::string>& accumulators() {
  static const std::map<Key, std::string> m = {
      // reduce.cc: acc_t<T> is double for every float type. (*)
      {{"", "ReduceSum"}, "f64"},
      {{"", "ReduceMean"}, "f64"},
      {{"", "ReduceProd"}, "f64"},
      {{"", "ReduceL1"}, "f64"},
      {{"", "ReduceL2"}, "f64"},
      {{"", "ReduceLogSum"}, "f64"},
      {{"", "ReduceLogSumExp"}, "f64"},
      {{"", "ReduceSumSquare"}, "f64"},
      // reduce_softmax.cc: exp in float, the row sum in double. (*)
      {{"", "Softmax"}, "f64"},
      {{"", "LogSoftmax"}, "f64"},
      // nn_norm.cc, nn_norm_more.cc, nn_contrib.cc: statistics in double. (*: LayerNormalization,
      // SkipLayerNormalization)
      {{"", "LayerNormalization"}, "f64"},
      {{"com.microsoft", "SkipLayerNormalization"}, "f64"},
      {{"", "BatchNormalization"}, "f64"},
      {{"", "InstanceNormalization"}, "f64"},
      {{"", "RMSNormalization"}, "f64"},
      {{"", "GroupNormalization"}, "f64"},
      {{"", "LpNormalization"}, "f64"},
      {{"", "MeanVarianceNormalization"}, "f64"},
      // gemm.cc: the half types are widened and multiplied by sgemm. (*)
      {{"", "MatMul"}, "f32"},
      {{"", "Gemm"}, "f32"},
      {{"com.microsoft", "FusedGemm"}, "f32"},
      {{"com.microsoft", "FusedMatMul"}, "f32"},
      // nn_conv.cc: with_compute_type runs the half types in float (gemm<float>). (*)
      {{"", "Conv"}, "f32"},
      {{"", "ConvTranspose"}, "f32"},
      {{"com.microsoft", "FusedConv"}, "f32"},
      // nn_attention.cc: scores, softmax and the weighted sum in double. (*)
      {{"", "Attention"}, "f64"},
      // nn_contrib_attention.cc: compute type float for the half types. (*)
      {{"com.microsoft", "MultiHeadAttention"}, "f32"},
      // nn_flex_attention.cc, nn_linear_attention.cc: in double.
      {{"ai.onnx.preview", "FlexAttention"}, "f64"},
      {{"", "LinearAttention"}, "f64"},
      // nn_pool.cc: window sums in double.
      {{"", "AveragePool"}, "f64"},
      {{"", "LpPool"}, "f64"},
      {{"", "GlobalAveragePool"}, "f64"},
      {{"", "GlobalLpPool"}, "f64"},
      {{"", "LRN"}, "f64"},
      // math_einsum_det.cc: in double.
      {{"", "Einsum"}, "f64"},
      {{"", "Det"}, "f64"},
      // tensor_cumsum.cc: the running sum in compute_t (float for the half types).
      {{"", "CumSum"}, "f32"},
      // elementwise_variadic.cc: Sum and Mean of the inputs in compute_t.
      {{"", "Sum"}, "f32"},
      {{"", "Mean"}, "f32"},
      // nn_rnn.cc: gates in compute_t.
      {{"", "RNN"}, "f32"},
      {{"", "GRU"}, "f32"},
      {{"", "LSTM"}, "f32"},
      // signal_dft.cc, nn_loss.cc, nn_deform_col2im.cc: in double.
      {{"", "DFT"}, "f64"},
      {{"", "STFT"}, "f64"},
      {{"", "NegativeLogLikelihoodLoss"}, "f64"},
      {{"", "SoftmaxCrossEntropyLoss"}, "f64"},
      {{"", "DeformConv"}, "f64"},
      {{"", "Col2Im"}, "f64"},
  };
  return m;
}

// Element types of the contrib and ai.onnx.ml ops (not in onnx_schema_types.inc): what their
// kernels dispatch on.
const std::map<Key, std::vector<DType>>& contrib_types() {
  static const std::vector<DType> kFloats = {DType::kDouble, DType::kFloat, DType::kFloat16,
                                             DType::kBFloat16};
  static const std::map<Key, std::vector<DType>> m = {
      {{"com.microsoft", "FusedConv"}, kFloats},
      {{"com.microsoft", "FusedGemm"}, kFloats},
      {{"com.microsoft", "FusedMatMul"}, kFloats},
      {{"com.microsoft", "SkipLayerNormalization"}, kFloats},
      {{"com.microsoft", "MultiHeadAttention"}, kFloats},
      {{"com.microsoft", "Gelu"}, kFloats},
      {{"com.microsoft", "FastGelu"}, kFloats},
      {{"com.microsoft", "BiasGelu"}, kFloats},
      {{"com.microsoft", "QuickGelu"}, kFloats},
      // ai.onnx.ml (ml_linear.cc): numeric inputs read as float, float outputs (labels int64 or
      // string); onnx_schema_types.inc holds only the default domain.
      {{"ai.onnx.ml", "Scaler"}, {DType::kDouble, DType::kFloat, DType::kInt64, DType::kInt32}},
      {{"ai.onnx.ml", "ArrayFeatureExtractor"},
       {DType::kDouble, DType::kFloat, DType::kInt64, DType::kInt32, DType::kString}},
      {{"ai.onnx.ml", "LinearRegressor"},
       {DType::kDouble, DType::kFloat, DType::kInt64, DType::kInt32}},
      {{"ai.onnx.ml", "LinearClassifier"},
       {DType::kDouble, DType::kFloat, DType::kInt64, DType::kInt32, DType::kString}},
      {{"com.microsoft", "DynamicQuantizeLSTM"}, {DType::kFloat, DType::kInt8, DType::kUInt8}},
      {{"com.microsoft", "DynamicQuantizeMatMul"}, {DType::kFloat, DType::kInt8, DType::kUInt8}},
      {{"com.microsoft", "MatMulIntegerToFloat"},
       {DType::kFloat, DType::kFloat16, DType::kInt8, DType::kUInt8}},
      // quant_ort.cc and QGemm: 8-bit data, float scales (QGemm's output float or 8-bit; its C
      // int32); QLinearSoftmax takes uint8 only.
      {{"com.microsoft", "QLinearAdd"}, {DType::kFloat, DType::kInt8, DType::kUInt8}},
      {{"com.microsoft", "QLinearMul"}, {DType::kFloat, DType::kInt8, DType::kUInt8}},
      {{"com.microsoft", "QLinearGlobalAveragePool"}, {DType::kFloat, DType::kInt8, DType::kUInt8}},
      {{"com.microsoft", "QLinearSigmoid"}, {DType::kFloat, DType::kInt8, DType::kUInt8}},
      {{"com.microsoft", "QLinearConcat"}, {DType::kFloat, DType::kInt8, DType::kUInt8}},
      {{"com.microsoft", "QLinearSoftmax"}, {DType::kFloat, DType::kUInt8}},
      {{"com.microsoft", "QGemm"}, {DType::kFloat, DType::kInt32, DType::kInt8, DType::kUInt8}},
  };
  return m;
}

// Types an op's schema allows that its kernel refuses (each found by tests/lowp_slow or the
// conformance suite, with the reason).
const std::map<Key, std::vector<DType>>& refused() {
  static const std::map<Key, std::vector<DType>> m = {};
  return m;
}

std::string normal_domain(const std::string& d) {
  return d == "ai.onnx" ? "" : d;
}

}  // namespace

namespace {

struct SchemaRow {
  const char* domain;
  const char* op;
  int since;
  const char* types;
  const char* inputs;
  const char* outputs;
};
constexpr SchemaRow kSchemaRows[] = {
#include "executor/cpu/onnx_schema_types.inc"
};

std::vector<int> masks(const char* digits) {
  std::vector<int> m;
  for (const char* c = digits; *c != 0; ++c) m.push_back(*c - '0');
  return m;
}

}  // namespace

const SchemaTypes* onnx_schema_types(const std::string& domain, const std::string& op_type,
                                     int opset) {
  // (domain, op) -> since_version -> types, built once.
  static const auto* table = [] {
    auto* t = new std::map<Key, std::map<int, SchemaTypes>>();
    for (const SchemaRow& r : kSchemaRows) {
      SchemaTypes& st = (*t)[{r.domain, r.op}][r.since];
      st.since_version = r.since;
      st.inputs = masks(r.inputs);
      st.outputs = masks(r.outputs);
      const std::string names = r.types;
      for (DType d : kOrder) {
        const std::string n = short_dtype_name(d);
        for (size_t at = names.find(n); at != std::string::npos; at = names.find(n, at + 1)) {
          const bool starts = at == 0 || names[at - 1] == ' ';
          const bool ends = at + n.size() == names.size() || names[at + n.size()] == ' ';
          if (starts && ends) {
            st.types.push_back(d);
            break;
          }
        }
      }
    }
    return t;
  }();
  auto it = table->find({normal_domain(domain), op_type});
  if (it == table->end()) return nullptr;
  auto v = it->second.upper_bound(opset);
  if (v == it->second.begin()) return nullptr;
  return &std::prev(v)->second;
}

std::string short_dtype_name(DType t) {
  switch (t) {
    case DType::kDouble:
      return "f64";
    case DType::kFloat:
      return "f32";
    case DType::kFloat16:
      return "f16";
    case DType::kBFloat16:
      return "bf16";
    case DType::kInt8:
      return "i8";
    case DType::kInt16:
      return "i16";
    case DType::kInt32:
      return "i32";
    case DType::kInt64:
      return "i64";
    case DType::kUInt8:
      return "u8";
    case DType::kUInt16:
      return "u16";
    case DType::kUInt32:
      return "u32";
    case DType::kUInt64:
      return "u64";
    case DType::kBool:
      return "bool";
    case DType::kString:
      return "str";
    default:
      return std::string(ir::dtype_name(t));
  }
}

KernelPrecision kernel_precision(const std::string& domain, const std::string& op_type, int opset) {
  const Key key{normal_domain(domain), op_type};
  KernelPrecision p;
  if (auto it = accumulators().find(key); it != accumulators().end()) p.accumulates = it->second;
  std::set<DType> found;
  if (auto it = contrib_types().find(key); it != contrib_types().end()) {
    found.insert(it->second.begin(), it->second.end());
  } else if (const SchemaTypes* st = onnx_schema_types(key.first, op_type, opset)) {
    found.insert(st->types.begin(), st->types.end());
  }
  if (auto it = refused().find(key); it != refused().end())
    for (DType t : it->second) found.erase(t);
  for (DType t : kOrder)
    if (found.count(t)) p.types.push_back(t);
  return p;
}

std::string describe(const KernelPrecision& p) {
  std::string s;
  for (DType t : p.types) s += (s.empty() ? "" : " ") + short_dtype_name(t);
  if (s.empty()) s = "-";
  if (!p.accumulates.empty()) s += "; accumulates " + p.accumulates;
  return s;
}

}  // namespace xopt::exec
