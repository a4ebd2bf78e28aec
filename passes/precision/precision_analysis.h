// What convert-precision knows about a model before it changes anything: for every node that
// computes in fp32, whether it may run in fp16 and in bf16 and which rule decided; which float
// values really carry integers; which constants are additive masks. The pass and the `mixed`
// chooser both call analyze_precision, so the chooser only ever proposes what the pass may do and
// the report can say why a node stayed fp32.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "passes/precision/precision_options.h"

namespace xopt::passes {

// Why a node may or may not go to a low-precision type, in the report's words.
enum class PrecisionRule {
  kFree,      // nothing keeps it in fp32 ("free")
  kSchema,    // its ONNX (or contrib) schema has no such type at the model's opset ("schema")
  kInteger,   // its float results flow into a shape, size, index, Range, Resize scales ... ("rule")
  kSubgraph,  // If/Loop/Scan: the boundary stays fp32, the bodies are converted inside ("rule")
  kUser,      // --keep-fp32 names it ("user"); or --force-lowp overrode the integer rule ("user")
};
// "free", "schema", "rule", "subgraph", "user".
std::string_view precision_rule_name(PrecisionRule rule);

struct NodePrecision {
  bool fp16 = false;  // may run in fp16
  bool bf16 = false;  // may run in bf16
  // The rule that decided: kFree when both are allowed; otherwise the rule that forbade one
  // (kSchema for FusedConv, which has fp16 but no bf16). Inputs and outputs the schema pins to
  // fp32 on a node that converts (LayerNormalization's stash outputs) stay fp32 by the pass itself.
  PrecisionRule rule = PrecisionRule::kFree;
  std::string why;  // one line for the report, e.g. "output flows into Range (node 'r')"
};

struct PrecisionAnalysis {
  // Every node that reads or writes an fp32 tensor, by precision_node_key (top-level graph).
  std::map<std::string, NodePrecision, std::less<>> nodes;
  // fp32 values that carry integers (names), kept fp32 by the integer-chain rule.
  std::vector<std::string> integer_values;
  // fp32 constants (initializers, Constant outputs) used as additive masks (names).
  std::vector<std::string> mask_constants;

  const NodePrecision* find(std::string_view key) const {
    auto it = nodes.find(key);
    return it == nodes.end() ? nullptr : &it->second;
  }
  // May the node `key` run in `type` (kFloat16 or kBFloat16)? false for nodes not listed.
  bool allows(std::string_view key, ir::DType type) const;
};

// The key a node goes by in PrecisionAnalysis, PrecisionChoice and the `xopt.precision` metadata:
// its name, or "@" + its first output's name when it has none.
std::string precision_node_key(const ir::Node& node);

// Analyses the top-level graph of `model` (shapes inferred: small/large values are told apart by
// their shapes). options.keep_fp32 and options.force_lowp are applied (errors name a bad /regex/);
// options.auto_rules == false turns the integer rule off, never the schema rule.
Result<PrecisionAnalysis> analyze_precision(const ir::Model& model,
                                            const PrecisionOptions& options);

// --keep-fp32 / --force-lowp entries: an op type ("Softmax", "com.microsoft.Attention"), a node
// name, or /regex/ matched (std::regex_search) against node names.
class NodeMatcher {
 public:
  static Result<NodeMatcher> make(const std::vector<std::string>& patterns,
                                  std::string_view flag);
  bool matches(const ir::Node& node) const;
  bool empty() const { return patterns_.empty(); }

 private:
  struct Pattern;
  std::vector<std::shared_ptr<const Pattern>> patterns_;
};

// The schema rule for one input (is_output false) or output of a node: whether the ONNX schema
// of the node's op at the model's opset (libonnx; our table for com.microsoft ops) accepts `type`
// there. Unknown ops and positions accept nothing.
bool schema_accepts(const ir::Node& node, bool is_output, size_t index, ir::DType type);

}  // namespace xopt::passes
