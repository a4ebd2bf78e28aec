#include "passes/fold/node_traits.h"

#include <string>
#include <unordered_set>

#include "passes/rewrite.h"

namespace xopt::passes {

namespace {

// Dropout is random unless it is in inference mode: is_test (opset < 7), always at 7-11 (no
// training), training_mode input absent or constant false from 12 on.
bool dropout_is_random(const ir::Node& n) {
  int64_t opset = n.opset();
  if (opset < 7) return n.attr_int("is_test", 0) == 0;
  if (opset < 12) return false;
  const ir::Value* training = n.input(2);
  if (training == nullptr) return false;
  auto t = constant_value(training);
  return !(t && t->numel() == 1 && t->as_int64(0) == 0);
}

}  // namespace

bool is_random(const ir::Node& n) {
  static const std::unordered_set<std::string> onnx_random = {"RandomNormal",  "RandomNormalLike",
                                                              "RandomUniform", "RandomUniformLike",
                                                              "Multinomial",   "Bernoulli"};
  static const std::unordered_set<std::string> ms_random = {"BiasDropout", "BitmaskDropout",
                                                            "BitmaskBiasDropout", "Rand"};
  if (n.domain().empty() || n.domain() == "ai.onnx") {
    if (n.op_type() == "Dropout") return dropout_is_random(n);
    return onnx_random.count(n.op_type()) != 0;
  }
  if (n.domain() == "com.microsoft") return ms_random.count(n.op_type()) != 0;
  return false;
}

bool has_subgraph(const ir::Node& n) {
  for (const onnx::AttributeProto& a : n.attributes())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS ||
        a.has_g() || a.graphs_size() > 0)
      return true;
  return false;
}

bool is_pure(const ir::Node& n) {
  const std::string& d = n.domain();
  if (!(d.empty() || d == "ai.onnx" || d == "com.microsoft")) return false;
  if (is_random(n) || has_subgraph(n)) return false;
  for (const ir::Value* v : n.inputs())
    if (v != nullptr && !v->is_tensor()) return false;
  for (const ir::Value* v : n.outputs())
    if (v != nullptr && !v->is_tensor()) return false;
  return true;
}

}  // namespace xopt::passes
