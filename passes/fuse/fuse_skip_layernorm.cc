// LayerNormalization(Add(input, skip) [with input = Add(m, bias)], gamma, beta), over the last axis
// ==> com.microsoft.SkipLayerNormalization(input, skip, gamma, beta, bias)
//
// onnxruntime's semantics: input is [B,S,D] or [N,D]; skip has input's shape or, for 3-D input,
// [1,S,D] or [S,D]; gamma, beta and bias are 1-D [D]. When the sum has readers besides the
// normalization (the residual stream of a pre-LN block), they read the fused node's fourth output
// input_skip_bias_sum, which is exactly input + skip + bias.
#include <unordered_set>
#include <vector>

#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using xfmr::other_input;
using xfmr::single_reader;

bool is_vector_of(const ir::Value* v, const ir::Dim& d, ir::DType t) {
  const ir::Shape& s = v->shape();
  return v->dtype() == t && s.has_rank() && s.rank() == 1 && s[0] == d;
}

// `skip` as onnxruntime accepts it next to an input of shape `in`.
bool skip_shape_ok(const ir::Shape& skip, const ir::Shape& in) {
  if (!skip.has_rank()) return false;
  if (skip == in) return true;
  if (in.rank() != 3) return false;
  const auto& d = in.dims();
  if (skip.rank() == 3)
    return skip[0].is_known() && skip[0].value == 1 && skip[1] == d[1] && skip[2] == d[2];
  return skip.rank() == 2 && skip[0] == d[1] && skip[1] == d[2];
}

struct Match {
  ir::Node* ln = nullptr;
  ir::Node* add = nullptr;
  ir::Node* bias_add = nullptr;
  ir::Value* input = nullptr;
  ir::Value* skip = nullptr;
  ir::Value* bias = nullptr;
};

class FuseSkipLayerNorm final : public Pass {
 public:
  static constexpr std::string_view kName = "fuse-skip-layernorm";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    bool shapes_ready = false;
    bool needs_sort = false;
    std::unordered_set<const ir::Node*> removed;
    for (ir::Node* n : g.node_list()) {
      if (removed.count(n) || !n->is("LayerNormalization")) continue;
      if (!shapes_ready) {
        XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
        shapes_ready = true;
      }
      auto m = match(n);
      if (!m) continue;
      needs_sort |= rewrite(g, *m, removed, ctx);
      changed = true;
    }
    if (needs_sort && !g.topo_sort())
      return internal_error("fuse-skip-layernorm left a cycle in the graph");
    return changed;
  }

 private:
  static std::optional<Match> match(ir::Node* ln) {
    Match m;
    m.ln = ln;
    ir::Value* sum = ln->input(0);
    ir::Value* gamma = ln->input(1);
    ir::Value* beta = ln->input(2);
    if (sum == nullptr || gamma == nullptr || sum->producer() == nullptr) return std::nullopt;
    for (size_t i = 1; i < ln->num_outputs(); ++i) {
      const ir::Value* o = ln->output(i);
      if (o != nullptr && (o->has_uses() || o->is_graph_output())) return std::nullopt;
    }
    const ir::Shape& s = sum->shape();
    const ir::DType t = sum->dtype();
    if (!s.has_rank() || (s.rank() != 2 && s.rank() != 3)) return std::nullopt;
    if (t != ir::DType::kFloat && t != ir::DType::kFloat16) return std::nullopt;
    const auto rank = static_cast<int64_t>(s.rank());
    int64_t axis = ln->attr_int("axis", -1);
    if (axis != -1 && axis != rank - 1) return std::nullopt;
    if (ln->attr_int("stash_type", 1) != 1) return std::nullopt;
    const ir::Dim& hidden = s.dims().back();
    if (!hidden.is_known() || !is_vector_of(gamma, hidden, t)) return std::nullopt;
    if (beta != nullptr && !is_vector_of(beta, hidden, t)) return std::nullopt;

    m.add = sum->producer();
    if (!m.add->is("Add") || m.add->num_inputs() != 2) return std::nullopt;
    ir::Value* a = m.add->input(0);
    ir::Value* b = m.add->input(1);
    if (a == nullptr || b == nullptr || a == b) return std::nullopt;
    // A 1-D bias added to one side first (the output projection of the block before) joins too.
    for (ir::Value** side : {&a, &b}) {
      ir::Node* p = (*side)->producer();
      if (p == nullptr || !p->is("Add") || single_reader(*side) != m.add) continue;
      for (size_t i = 0; i < 2; ++i) {
        ir::Value* c = p->input(i);
        ir::Value* rest = other_input(p, c);
        if (c == nullptr || rest == nullptr || !constant_value(c) || !is_vector_of(c, hidden, t))
          continue;
        if (!(rest->shape() == (*side)->shape()) || rest->dtype() != t) continue;
        m.bias_add = p;
        m.bias = c;
        *side = rest;
        break;
      }
      if (m.bias_add != nullptr) break;
    }
    // The input has the sum's full shape; the skip may be broadcast as onnxruntime allows.
    if (a->shape() == s && skip_shape_ok(b->shape(), s)) {
      m.input = a;
      m.skip = b;
    } else if (b->shape() == s && skip_shape_ok(a->shape(), s)) {
      m.input = b;
      m.skip = a;
    } else {
      return std::nullopt;
    }
    if (m.input->dtype() != t || m.skip->dtype() != t) return std::nullopt;
    return m;
  }

  // Returns true when the graph order needs repairing (gamma/beta computed after the Add).
  static bool rewrite(ir::Graph& g, const Match& m, std::unordered_set<const ir::Node*>& removed,
                      PassContext& ctx) {
    g.require_opset("com.microsoft", 1);
    ir::Value* sum = m.add->output(0);
    const bool sum_read_elsewhere = name_is_visible(sum) || sum->uses().size() > 1;
    std::vector<ir::Value*> inputs{m.input, m.skip, m.ln->input(1), m.ln->input(2)};
    if (m.bias != nullptr) inputs.push_back(m.bias);
    while (inputs.back() == nullptr) inputs.pop_back();
    std::vector<ir::Node*> replaced{m.add, m.ln};
    if (m.bias_add != nullptr) replaced.insert(replaced.begin(), m.bias_add);
    // The fused node sits where the Add was, ahead of every reader of the sum.
    ir::Node* anchor = m.bias_add != nullptr ? m.bias_add : m.add;
    std::vector<std::string> extra;
    if (sum_read_elsewhere) extra = {"", "", g.unique_name(sum->name() + "_sum")};
    ir::Node* fused = xfmr::add_replacing_node(g, m.ln->output(0), "SkipLayerNormalization",
                                               "com.microsoft", inputs, anchor, replaced, extra);
    fused->set_attr("epsilon", m.ln->attr_float("epsilon", 1e-5f));
    xfmr::remove_dead(g, {m.ln}, &removed);
    if (sum_read_elsewhere) {
      // The remaining readers of the sum read input_skip_bias_sum, under the sum's name.
      ir::Value* out3 = fused->output(3);
      out3->set_dtype(sum->dtype());
      out3->set_shape(sum->shape());
      std::string name = release_name(g, sum);
      g.replace_all_uses(sum, out3);
      g.rename_value(out3, name);
      ctx.count("sum-output");
    }
    xfmr::remove_dead(g, {m.add, m.bias_add}, &removed);
    ctx.count("SkipLayerNormalization");
    if (m.bias != nullptr) ctx.count("bias");
    for (size_t i = 2; i < 4; ++i) {
      const ir::Value* p = fused->input(i);
      if (p != nullptr && p->producer() != nullptr) return true;
    }
    return false;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseSkipLayerNorm,
                   "fuses Add (+ 1-D bias Add) + LayerNormalization over the last axis into "
                   "com.microsoft.SkipLayerNormalization",
                   {{"fuse", 16}});

}  // namespace xopt::passes
