// Nodes n and m with the same op, domain, attributes and inputs (m first) ==> readers of n's
// results read m's; n is removed. Random ops and nodes with subgraphs are never merged.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/fold/node_traits.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

// Equal for nodes that compute the same thing: op, domain, inputs (by identity), which outputs
// exist, and the attributes in a fixed order.
std::string node_key(const ir::Node& n) {
  std::string key = n.domain() + "|" + n.op_type() + "|";
  for (const ir::Value* v : n.inputs()) key += std::to_string(reinterpret_cast<uintptr_t>(v)) + ",";
  key += "|";
  for (const ir::Value* v : n.outputs()) key += v == nullptr ? '0' : '1';
  std::vector<const onnx::AttributeProto*> attrs;
  for (const auto& a : n.attributes()) attrs.push_back(&a);
  std::sort(attrs.begin(), attrs.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  for (const auto* a : attrs) {
    std::string bytes;
    a->SerializeToString(&bytes);
    key += "|" + std::to_string(bytes.size()) + ":" + bytes;
  }
  return key;
}

class Cse final : public Pass {
 public:
  static constexpr std::string_view kName = "cse";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    std::unordered_map<std::string, ir::Node*> seen;
    std::vector<ir::Node*> merged;  // read by nothing now; removed at the end, last first
    // Graph order: a node's inputs are merged before the node's own key is taken.
    for (ir::Node* n : g.node_list()) {
      if (!is_pure(*n)) continue;
      auto [it, fresh] = seen.emplace(node_key(*n), n);
      if (fresh || !merge(g, n, it->second)) continue;
      merged.push_back(n);
      ctx.count("nodes");
      changed = true;
    }
    // Last first: each is then the last reader of its inputs, which makes removing the k copies
    // of one op on one value O(k) rather than O(k^2) (a 10^5-reader fan-out took 7.3 s).
    for (auto it = merged.rbegin(); it != merged.rend(); ++it) g.remove_node(*it);
    return changed;
  }

 private:
  // Makes readers of `dup`'s results read `original`'s, leaving `dup` read by nothing (run()
  // removes it). A result whose name is visible (graph output, read by a subgraph) passes its name
  // to the original's result, which must then have no visible name of its own; false, changing
  // nothing, when that does not hold.
  static bool merge(ir::Graph& g, ir::Node* dup, ir::Node* original) {
    for (size_t i = 0; i < dup->num_outputs(); ++i) {
      ir::Value* d = dup->output(i);
      ir::Value* o = original->output(i);
      if (d != nullptr && name_is_visible(d) && name_is_visible(o)) return false;
    }
    // Two visible results of `dup` cannot both rename one value; each output is distinct though.
    for (size_t i = 0; i < dup->num_outputs(); ++i) {
      ir::Value* d = dup->output(i);
      ir::Value* o = original->output(i);
      if (d == nullptr) continue;
      if (!name_is_visible(d)) {
        g.replace_all_uses(d, o);
        continue;
      }
      std::string name = release_name(g, d);
      g.replace_all_uses(d, o);
      if (o->is_graph_output() && o->has_value_info()) g.clear_value_info(o);
      g.rename_value(o, name);
    }
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(Cse,
                   "merges nodes that compute the same op with the same attributes on the same "
                   "inputs (not random ops, not nodes with subgraphs)",
                   {{"fold", 30}});

}  // namespace xopt::passes
