// The facts convert-precision decides by: the schema rule (per input and output, from libonnx's
// type constraints and a table of onnxruntime's com.microsoft ones), the integer-chain rule (by
// data flow: what a float value flows into, or comes from), mask constants, and the user's lists.
#include "passes/precision/precision_analysis.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <regex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/op_registry.h"
#include "ir/subgraph.h"
#include "onnx/defs/schema.h"
#include "passes/fuse/opset_upgrade.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using ir::DType;

// onnxruntime's contrib schemas (contrib_defs.cc, as onnxruntime 1.32's get_all_operator_schema
// lists them) for the com.microsoft ops our fusions emit: which of fp16 / bf16 their `T` takes,
// and the outputs pinned to fp32 (SkipLayerNormalization's mean and inv_std_var are `U`).
struct ContribTypes {
  const char* op;
  bool fp16;
  bool bf16;
  std::vector<int> fp32_outputs;
};
const std::vector<ContribTypes>& contrib_table() {
  static const std::vector<ContribTypes> table = {
      {"FusedConv", true, false, {}},
      {"FusedGemm", true, false, {}},
      {"FusedMatMul", true, true, {}},
      {"BiasGelu", true, true, {}},
      {"FastGelu", true, true, {}},
      {"Gelu", true, true, {}},
      {"QuickGelu", true, true, {}},
      {"SkipLayerNormalization", true, true, {1, 2}},
      {"SkipSimplifiedLayerNormalization", true, true, {1, 2}},
      {"MultiHeadAttention", true, true, {}},
      {"Attention", true, true, {}},
      {"RotaryEmbedding", true, true, {}},
      {"BiasSoftmax", true, false, {}},
      {"BiasAdd", true, false, {}},
      {"GroupNorm", true, false, {}},
  };
  return table;
}

bool is_onnx_domain(const ir::Node& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

// The libonnx we build against (1.12) knows opsets up to 17. Where a model's opset is newer,
// these ops take float16 and bfloat16 for every float input and output of theirs (ONNX 1.23's
// schemas): Conv, the pools, InstanceNormalization and the activations of
// fuse::takes_bfloat16_from_22 gained bfloat16 at 22; Attention, RMSNormalization and
// RotaryEmbedding are new at 23.
bool newer_schema(const ir::Node& n) {
  if (!is_onnx_domain(n)) return false;
  if (n.opset() >= 22 && fuse::takes_bfloat16_from_22(n.op_type())) return true;
  const std::string& op = n.op_type();
  return n.opset() >= 23 &&
         (op == "Attention" || op == "RMSNormalization" || op == "RotaryEmbedding");
}

const onnx::OpSchema* schema_of(const ir::Node& n) {
  if (!is_onnx_domain(n)) return nullptr;
  return onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(n.opset()), "");
}

// The formal parameter of input or output `index` (the last one repeats when variadic).
const onnx::OpSchema::FormalParameter* formal(const onnx::OpSchema& s, bool is_output,
                                              size_t index) {
  const auto& params = is_output ? s.outputs() : s.inputs();
  if (params.empty()) return nullptr;
  if (index < params.size()) return &params[index];
  if (params.back().GetOption() == onnx::OpSchema::Variadic) return &params.back();
  return nullptr;
}

const char* type_string(DType t) {
  switch (t) {
    case DType::kFloat16:
      return "tensor(float16)";
    case DType::kBFloat16:
      return "tensor(bfloat16)";
    case DType::kFloat:
      return "tensor(float)";
    default:
      return "";
  }
}

bool has_subgraph(const ir::Node& n) {
  return !ir::subgraph_attrs(n).empty();
}

bool is_fp32(const ir::Value* v) {
  return v != nullptr && v->is_tensor() && v->dtype() == DType::kFloat;
}

// A value small enough to be shape arithmetic: at most 64 Ki elements when the shape is static, a
// scalar or a vector otherwise.
bool is_small(const ir::Value* v) {
  const ir::Shape& s = v->shape();
  if (!s.has_rank()) return false;
  if (s.is_static()) return s.numel().value_or(INT64_MAX) <= 65536;
  return s.rank() <= 1;
}

// A scalar or a vector of at most 8 elements: what shape and index arguments look like.
bool is_shape_like(const ir::Value* v) {
  const ir::Shape& s = v->shape();
  return s.has_rank() && s.rank() <= 1 && s.numel().value_or(INT64_MAX) <= 8;
}

bool is_constant_like(const ir::Value* v) {
  if (v->is_constant()) return true;
  return v->producer() != nullptr && v->producer()->is("Constant");
}

bool integer_type(DType t) {
  return ir::is_integer(t);
}

// Integer-valued results keep flowing through these (and through every elementwise or view op).
bool moves_data(const ir::Node& n) {
  static const std::set<std::string, std::less<>> ops = {
      "Concat", "Gather",    "Slice",     "Unsqueeze", "Squeeze",   "Reshape", "Expand", "Tile",
      "Split",  "Transpose", "Cast",      "Identity",  "Flatten",   "Floor",   "Ceil",   "Round",
      "Range",  "CumSum",    "ReduceSum", "ReduceMax", "ReduceMin", "Min",     "Max",    "Where"};
  return is_onnx_domain(n) && ops.count(n.op_type()) != 0;
}

// A mask on its way to the Add (or Where) that applies it.
bool carries_mask(const ir::Node& n) {
  static const std::set<std::string, std::less<>> ops = {
      "Mul",    "Sub",  "Where",     "Expand",   "Unsqueeze", "Squeeze", "Reshape", "Slice", "Cast",
      "Concat", "Tile", "Transpose", "Identity", "Gather",    "Min",     "Max",     "Neg"};
  return is_onnx_domain(n) && ops.count(n.op_type()) != 0;
}
// Between the masked scores and the softmax.
bool leads_to_softmax(const ir::Node& n) {
  static const std::set<std::string, std::less<>> ops = {
      "Reshape", "Transpose", "Add",     "Identity",  "Cast",
      "Div",     "Mul",       "Squeeze", "Unsqueeze", "Where"};
  return is_onnx_domain(n) && ops.count(n.op_type()) != 0;
}
bool is_softmax(const ir::Node& n) {
  return n.is("Softmax") || n.is("LogSoftmax");
}
// Attention ops that take an additive mask (attention_bias / attn_mask) at `index`.
bool attention_bias_input(const ir::Node& n, int index) {
  if (n.domain() == "com.microsoft")
    return (n.op_type() == "MultiHeadAttention" && index == 5) ||
           (n.op_type() == "Attention" && index == 5);
  return n.is("Attention") && index == 3;
}

bool reaches_softmax(const ir::Value* v, int depth) {
  for (const ir::Use& u : v->uses()) {
    if (u.index < 0) continue;
    const ir::Node& c = *u.node;
    if (is_softmax(c) || attention_bias_input(c, u.index)) return true;
    if (depth > 0 && leads_to_softmax(c))
      for (const ir::Value* o : c.outputs())
        if (o != nullptr && reaches_softmax(o, depth - 1)) return true;
  }
  return false;
}

// The constant flows through mask-carrying ops into an Add or Where whose result reaches a
// softmax (or straight into an attention op's bias input).
bool used_as_additive_mask(const ir::Value* v, int depth) {
  for (const ir::Use& u : v->uses()) {
    if (u.index < 0) continue;
    const ir::Node& c = *u.node;
    if (attention_bias_input(c, u.index)) return true;
    if ((c.is("Add") || c.is("Where")) && c.output(0) != nullptr && reaches_softmax(c.output(0), 4))
      return true;
    if (depth > 0 && carries_mask(c))
      for (const ir::Value* o : c.outputs())
        if (o != nullptr && used_as_additive_mask(o, depth - 1)) return true;
  }
  return false;
}

// Whether a constant holds values no low-precision type represents as a mask would need them:
// -inf, or below fp16's lowest (float-min, -1e9).
bool has_mask_values(const ir::Tensor& t) {
  if (t.dtype() != DType::kFloat) return false;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (p[i] <= -65504.0f) return true;
  return false;
}

std::string describe_use(const ir::Node& n) {
  return n.op_type() + " (node '" + precision_node_key(n) + "')";
}

}  // namespace

std::string_view precision_rule_name(PrecisionRule rule) {
  switch (rule) {
    case PrecisionRule::kFree:
      return "free";
    case PrecisionRule::kSchema:
      return "schema";
    case PrecisionRule::kInteger:
      return "rule";
    case PrecisionRule::kSubgraph:
      return "subgraph";
    case PrecisionRule::kUser:
      return "user";
  }
  return "free";
}

bool PrecisionAnalysis::allows(std::string_view key, DType type) const {
  const NodePrecision* p = find(key);
  if (p == nullptr) return false;
  return type == DType::kFloat16 ? p->fp16 : type == DType::kBFloat16 ? p->bf16 : false;
}

std::string precision_node_key(const ir::Node& node) {
  if (!node.name().empty()) return node.name();
  for (const ir::Value* o : node.outputs())
    if (o != nullptr) return "@" + o->name();
  return "@" + node.op_type();
}

struct NodeMatcher::Pattern {
  std::string text;
  bool is_regex = false;
  std::regex re;
};

Result<NodeMatcher> NodeMatcher::make(const std::vector<std::string>& patterns,
                                      std::string_view flag) {
  NodeMatcher m;
  for (const std::string& p : patterns) {
    if (p.empty()) return invalid_argument(std::string(flag) + ": empty entry");
    auto pat = std::make_shared<Pattern>();
    pat->text = p;
    if (p.size() >= 2 && p.front() == '/' && p.back() == '/') {
      pat->is_regex = true;
      try {
        pat->re = std::regex(p.substr(1, p.size() - 2));
      } catch (const std::regex_error& e) {
        return invalid_argument(std::string(flag) + " '" + p + "': not a valid regex (" + e.what() +
                                ")");
      }
    }
    m.patterns_.push_back(std::move(pat));
  }
  return m;
}

bool NodeMatcher::matches(const ir::Node& node) const {
  for (const auto& p : patterns_) {
    if (p->is_regex) {
      if (!node.name().empty() && std::regex_search(node.name(), p->re)) return true;
      continue;
    }
    if (p->text == node.op_type() || p->text == node.domain() + "." + node.op_type() ||
        (!node.name().empty() && p->text == node.name()))
      return true;
  }
  return false;
}

bool schema_accepts(const ir::Node& node, bool is_output, size_t index, DType type) {
  if (node.domain() == "com.microsoft") {
    for (const ContribTypes& c : contrib_table()) {
      if (node.op_type() != c.op) continue;
      if (is_output && std::find(c.fp32_outputs.begin(), c.fp32_outputs.end(),
                                 static_cast<int>(index)) != c.fp32_outputs.end())
        return type == DType::kFloat;
      return type == DType::kFloat || (type == DType::kFloat16 && c.fp16) ||
             (type == DType::kBFloat16 && c.bf16);
    }
    return type == DType::kFloat;
  }
  if (newer_schema(node)) {
    // Float positions of these ops take every float type; integer ones (a mask, positions) are
    // never fp32 values, so are never asked about.
    return type == DType::kFloat || type == DType::kFloat16 || type == DType::kBFloat16;
  }
  const onnx::OpSchema* s = schema_of(node);
  if (s == nullptr) return false;
  const auto* f = formal(*s, is_output, index);
  if (f == nullptr) return false;
  const std::string want = type_string(type);
  for (const auto* t : f->GetTypes())
    if (t != nullptr && *t == want) return true;
  return false;
}

Result<PrecisionAnalysis> analyze_precision(const ir::Model& model,
                                            const PrecisionOptions& options) {
  const ir::Graph& g = *model.graph;
  XOPT_ASSIGN_OR_RETURN(NodeMatcher keep, NodeMatcher::make(options.keep_fp32, "--keep-fp32"));
  XOPT_ASSIGN_OR_RETURN(NodeMatcher force, NodeMatcher::make(options.force_lowp, "--force-lowp"));
  PrecisionAnalysis out;

  // Integer-valued fp32 values and the nodes that compute them, with the reason.
  std::unordered_map<const ir::Value*, std::string> integer;
  std::unordered_map<const ir::Node*, std::string> integer_nodes;
  if (options.auto_rules) {
    // Backward: what flows into an integer conversion, or into a float input no low-precision type
    // may take (Range's bounds, Resize's scales), is shape arithmetic.
    std::deque<std::pair<const ir::Value*, std::string>> work;
    for (const ir::Node* n : g.nodes()) {
      for (size_t i = 0; i < n->num_inputs(); ++i) {
        const ir::Value* v = n->input(i);
        if (!is_fp32(v) || !is_small(v)) continue;
        bool seed = false;
        if (n->is("Cast")) {
          seed = integer_type(static_cast<DType>(n->attr_int("to", 0)));
        } else if (!has_subgraph(*n) && schema_of(*n) != nullptr && is_shape_like(v)) {
          // A few numbers where the schema takes float only (Range's bounds, Resize's scales).
          seed = !schema_accepts(*n, false, i, DType::kFloat16) &&
                 !schema_accepts(*n, false, i, DType::kBFloat16);
        }
        if (seed) work.emplace_back(v, "flows into " + describe_use(*n));
      }
    }
    while (!work.empty()) {
      auto [v, why] = work.front();
      work.pop_front();
      if (!integer.emplace(v, why).second) continue;
      const ir::Node* p = v->producer();
      if (p == nullptr || p->is("Constant") || has_subgraph(*p)) continue;
      integer_nodes.emplace(p, why);
      for (const ir::Value* in : p->inputs())
        if (is_fp32(in) && is_small(in) && !integer.count(in)) work.emplace_back(in, why);
    }
    // Forward: what is computed from integers (a Cast from an integer type, Range) and constants
    // alone, through data movement and elementwise ops, stays an integer computation (position
    // ids, sinusoidal positions).
    std::deque<const ir::Value*> fwd;
    std::unordered_map<const ir::Value*, std::string> sourced;
    for (const ir::Node* n : g.nodes()) {
      const ir::Value* o = n->output(0);
      if (!is_fp32(o) || !is_small(o)) continue;
      if ((n->is("Cast") && n->input(0) != nullptr && integer_type(n->input(0)->dtype())) ||
          n->is("Range")) {
        sourced.emplace(o, "computed from integers by " + describe_use(*n));
        fwd.push_back(o);
      }
    }
    while (!fwd.empty()) {
      const ir::Value* v = fwd.front();
      fwd.pop_front();
      const std::string why = sourced[v];
      for (const ir::Use& u : v->uses()) {
        if (u.index < 0) continue;
        const ir::Node* c = u.node;
        if (integer_nodes.count(c) || has_subgraph(*c)) continue;
        const ir::OpInfo* info = ir::find_op(*c);
        const bool moves =
            moves_data(*c) || (info != nullptr && (info->elementwise || info->is_view));
        if (!moves) continue;
        bool all = true;
        for (const ir::Value* in : c->inputs())
          if (is_fp32(in) && !sourced.count(in) && !is_constant_like(in)) all = false;
        for (const ir::Value* o : c->outputs())
          if (o != nullptr && is_fp32(o) && !is_small(o)) all = false;
        if (!all) continue;
        integer_nodes.emplace(c, why);
        for (const ir::Value* o : c->outputs())
          if (is_fp32(o) && sourced.emplace(o, why).second) {
            integer.emplace(o, why);
            fwd.push_back(o);
          }
      }
    }
    for (const auto& [v, why] : integer) out.integer_values.push_back(v->name());
    std::sort(out.integer_values.begin(), out.integer_values.end());

    // Mask constants.
    for (const ir::Value* v : g.initializers())
      if (is_fp32(v) && v->is_constant() && used_as_additive_mask(v, 6) &&
          has_mask_values(*v->initializer()))
        out.mask_constants.push_back(v->name());
    for (const ir::Node* n : g.nodes()) {
      if (!n->is("Constant") && !n->is("ConstantOfShape")) continue;
      const ir::Value* o = n->output(0);
      if (!is_fp32(o) || !used_as_additive_mask(o, 6)) continue;
      ir::Tensor t =
          n->is("Constant") ? constant_value(o).value_or(ir::Tensor()) : n->attr_tensor("value");
      if (has_mask_values(t)) out.mask_constants.push_back(o->name());
    }
  }

  for (const ir::Node* n : g.nodes()) {
    bool touches = false;
    for (const ir::Value* v : n->inputs()) touches = touches || is_fp32(v);
    for (const ir::Value* v : n->outputs()) touches = touches || is_fp32(v);
    if (!touches) continue;
    NodePrecision np;
    // Schema: some fp32 input or output takes the type.
    auto schema_allows = [&](DType t) {
      if (n->is("Constant")) return true;
      for (size_t i = 0; i < n->num_inputs(); ++i)
        if (is_fp32(n->input(i)) && schema_accepts(*n, false, i, t)) return true;
      for (size_t i = 0; i < n->num_outputs(); ++i)
        if (is_fp32(n->output(i)) && schema_accepts(*n, true, i, t)) return true;
      return false;
    };
    const bool s16 = schema_allows(DType::kFloat16), sb16 = schema_allows(DType::kBFloat16);
    np.fp16 = s16;
    np.bf16 = sb16;
    if (!s16 || !sb16) {
      np.rule = PrecisionRule::kSchema;
      np.why = std::string(is_onnx_domain(*n) ? "ONNX" : n->domain()) + " schema of " +
               n->op_type() + " at opset " + std::to_string(n->opset()) + " has no " +
               (!s16 && !sb16 ? "float16 or bfloat16"
                : !s16        ? "float16"
                              : "bfloat16") +
               " type";
    }
    if (has_subgraph(*n)) {
      np = {false, false, PrecisionRule::kSubgraph,
            "its inputs and outputs stay fp32; its bodies are converted inside"};
    } else if (keep.matches(*n)) {
      np = {false, false, PrecisionRule::kUser, "--keep-fp32"};
    } else if (force.matches(*n)) {
      if (s16 || sb16) {
        np.fp16 = s16;
        np.bf16 = sb16;
        np.rule = PrecisionRule::kUser;
        np.why = "--force-lowp";
      }
    } else if (auto it = integer_nodes.find(n); it != integer_nodes.end() && (s16 || sb16)) {
      np = {false, false, PrecisionRule::kInteger, "carries integers: " + it->second};
    }
    out.nodes[precision_node_key(*n)] = std::move(np);
  }
  return out;
}

}  // namespace xopt::passes
