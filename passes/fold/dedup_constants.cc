// Initializers a and b with the same dtype, dims and bytes ==> readers of b read a; b is dropped.
#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

// dtype, dims and a hash of the first bytes: equal tensors have equal keys. Hashing only a prefix
// keeps the pass cheap on large models (weights rarely agree on their first bytes); candidates
// with equal keys are then compared in full.
std::string signature(const ir::Tensor& t) {
  constexpr size_t kPrefix = 256;
  std::string key = std::to_string(static_cast<int>(t.dtype())) + ":";
  for (int64_t d : t.dims()) key += std::to_string(d) + ",";
  size_t h = 0;
  if (t.dtype() == ir::DType::kString) {
    for (const std::string& s : t.strings()) h = h * 1000003u ^ std::hash<std::string_view>()(s);
  } else if (t.nbytes() > 0) {
    h = std::hash<std::string_view>()(
        std::string_view(static_cast<const char*>(t.raw_data()), std::min(t.nbytes(), kPrefix)));
  }
  return key + ":" + std::to_string(h);
}

// Tensors sharing their bytes (aliases folded from Identity nodes) need no byte comparison.
bool same_tensor(const ir::Tensor& a, const ir::Tensor& b) {
  if (a.dtype() != ir::DType::kString && a.dtype() == b.dtype() && a.dims() == b.dims() &&
      a.raw_data() == b.raw_data())
    return true;
  return a.same_contents(b);
}

class DedupConstants final : public Pass {
 public:
  static constexpr std::string_view kName = "dedup-constants";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    // Candidates with the same signature; the first of each content is kept.
    std::unordered_map<std::string, std::vector<ir::Value*>> kept;
    for (ir::Value* v : g.initializers()) {
      if (!v->is_constant() || v->sparse_initializer() != nullptr) continue;
      const ir::Tensor& t = *v->initializer();
      std::vector<ir::Value*>& same = kept[signature(t)];
      ir::Value* original = nullptr;
      for (ir::Value* k : same)
        if (same_tensor(*k->initializer(), t)) {
          original = k;
          break;
        }
      // A graph output or a value read by name from a subgraph keeps its own name, so it stays.
      if (original == nullptr || name_is_visible(v)) {
        if (original == nullptr) same.push_back(v);
        continue;
      }
      const auto bytes = static_cast<int64_t>(t.nbytes());
      g.replace_all_uses(v, original);
      g.remove_initializer(v);  // `t` is gone from here on
      ctx.count("initializers");
      ctx.count("bytes", bytes);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

XOPT_REGISTER_PASS(DedupConstants, "merges initializers with the same dtype, dims and contents",
                   {{"fold", 20}});

}  // namespace xopt::passes
