// Gemm/MatMul(Transpose(a), Transpose(b)), 2-D  ==>  Gemm(a, b) <transA, transB>;
// Transpose(Transpose(x, p1), p2)  ==>  Transpose(x, p1[p2[i]]), or x when that is the identity;
// Reshape(Reshape(x, s1), s2), s2 constant  ==>  Reshape(x, s2).
#include <numeric>
#include <optional>
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using fuse::sole_reader;

// The permutation of a Transpose; the default reverses the dims, which needs the input's rank.
std::optional<std::vector<int64_t>> perm_of(const ir::Node& t) {
  if (t.has_attr("perm")) return t.attr_ints("perm");
  const ir::Shape& s = t.input(0)->shape();
  if (!s.has_rank()) return std::nullopt;
  std::vector<int64_t> p(s.rank());
  std::iota(p.rbegin(), p.rend(), 0);
  return p;
}

// The Transpose producing `v` when it swaps the two dims of a 2-D tensor.
ir::Node* swap_2d(const ir::Value* v) {
  ir::Node* t = v == nullptr ? nullptr : v->producer();
  if (t == nullptr || !is_onnx_op(*t, "Transpose")) return nullptr;
  auto p = perm_of(*t);
  return p && *p == std::vector<int64_t>{1, 0} ? t : nullptr;
}

bool gemm_type(ir::DType t) {
  return t == ir::DType::kFloat || t == ir::DType::kDouble || t == ir::DType::kFloat16;
}

onnx::AttributeProto int_attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

class FuseTranspose final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-transpose";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* n, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    const char* what = nullptr;
    if (is_onnx_op(*n, "Gemm") || is_onnx_op(*n, "MatMul")) {
      if (into_gemm(g, n, removed)) what = "into-gemm";
    } else if (is_onnx_op(*n, "Transpose")) {
      what = compose_transposes(g, n, removed);
    } else if (is_onnx_op(*n, "Reshape")) {
      if (collapse_reshapes(g, n, removed)) what = "reshapes";
    }
    if (what == nullptr) return false;
    ctx.count(what);
    return true;
  }

 private:
  // Replaces `n` by `op` reading `inputs`; `producers` are the folded-in nodes, removed along
  // with `n` when it was their only reader, otherwise left for their other readers.
  static void replace(ir::Graph& g, ir::Node* n, const std::string& op,
                      const std::vector<ir::Value*>& inputs,
                      const std::vector<onnx::AttributeProto>& attrs,
                      const std::vector<ir::Node*>& producers,
                      std::unordered_set<const ir::Node*>& removed) {
    std::vector<ir::Node*> chain = {n}, kept;
    for (ir::Node* p : producers) (sole_reader(p->output(0)) == n ? chain : kept).push_back(p);
    ir::Node* fused =
        fuse::replace_chain(g, op, "", inputs, attrs, n->output(0), chain, n, removed);
    for (ir::Node* p : kept) fused->add_provenance(*p);
  }

  static bool into_gemm(ir::Graph& g, ir::Node* n, std::unordered_set<const ir::Node*>& removed) {
    const bool gemm = n->op_type() == "Gemm";
    if (n->num_inputs() < 2 || n->opset() < (gemm ? 7 : 11)) return false;
    if (!gemm) {
      // MatMul becomes Gemm (no C, which needs opset 11): both operands must be 2-D.
      const ir::Shape& as = n->input(0)->shape();
      const ir::Shape& bs = n->input(1)->shape();
      if (!as.has_rank() || as.rank() != 2 || !bs.has_rank() || bs.rank() != 2) return false;
      if (!gemm_type(n->output(0)->dtype())) return false;
    }
    ir::Node* ta = swap_2d(n->input(0));
    ir::Node* tb = swap_2d(n->input(1));
    if (ta == nullptr && tb == nullptr) return false;
    std::vector<onnx::AttributeProto> attrs;
    if (gemm)
      for (const auto& a : n->attributes())
        if (a.name() != "transA" && a.name() != "transB") attrs.push_back(a);
    int64_t trans_a = gemm ? n->attr_int("transA", 0) : 0;
    int64_t trans_b = gemm ? n->attr_int("transB", 0) : 0;
    if (ta != nullptr) trans_a = 1 - trans_a;
    if (tb != nullptr) trans_b = 1 - trans_b;
    if (trans_a != 0) attrs.push_back(int_attr("transA", 1));
    if (trans_b != 0) attrs.push_back(int_attr("transB", 1));
    std::vector<ir::Value*> inputs = n->inputs();
    std::vector<ir::Node*> producers;
    if (ta != nullptr) {
      inputs[0] = ta->input(0);
      producers.push_back(ta);
    }
    if (tb != nullptr && tb != ta) {
      producers.push_back(tb);
    }
    if (tb != nullptr) inputs[1] = tb->input(0);
    replace(g, n, "Gemm", inputs, attrs, producers, removed);
    return true;
  }

  static const char* compose_transposes(ir::Graph& g, ir::Node* outer,
                                        std::unordered_set<const ir::Node*>& removed) {
    ir::Node* inner = outer->input(0)->producer();
    if (inner == nullptr || !is_onnx_op(*inner, "Transpose")) return nullptr;
    auto p1 = perm_of(*inner);
    auto p2 = perm_of(*outer);
    if (!p1 || !p2 || p1->size() != p2->size()) return nullptr;
    std::vector<int64_t> p(p2->size());
    bool identity = true;
    for (size_t i = 0; i < p.size(); ++i) {
      if ((*p2)[i] < 0 || (*p2)[i] >= static_cast<int64_t>(p1->size())) return nullptr;
      p[i] = (*p1)[static_cast<size_t>((*p2)[i])];
      identity = identity && p[i] == static_cast<int64_t>(i);
    }
    ir::Value* x = inner->input(0);
    const bool inner_dead_after = sole_reader(inner->output(0)) == outer;
    if (identity) {
      if (bypass_node(g, outer, outer->output(0), x)) {
        removed.insert(outer);
        if (inner_dead_after) {
          removed.insert(inner);
          g.remove_node(inner);
        }
        return "identity-removed";
      }
      replace(g, outer, "Identity", {x}, {}, {inner}, removed);
      return "identity-removed";
    }
    onnx::AttributeProto perm;
    perm.set_name("perm");
    perm.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : p) perm.add_ints(v);
    replace(g, outer, "Transpose", {x}, {perm}, {inner}, removed);
    return "transposes";
  }

  static bool collapse_reshapes(ir::Graph& g, ir::Node* outer,
                                std::unordered_set<const ir::Node*>& removed) {
    if (outer->opset() < 5 || outer->num_inputs() != 2) return false;
    ir::Node* inner = outer->input(0)->producer();
    if (inner == nullptr || !is_onnx_op(*inner, "Reshape") || inner->num_outputs() != 1)
      return false;
    ir::Value* shape = outer->input(1);
    auto s = constant_value(shape);
    if (!s || s->dtype() != ir::DType::kInt64 || s->rank() != 1) return false;
    // A 0 copies a dim of the inner Reshape's result; that dim must then be known.
    std::vector<int64_t> dims = s->to_int64_vector();
    bool rewritten = false;
    if (outer->attr_int("allowzero", 0) == 0) {
      const ir::Shape& mid = inner->output(0)->shape();
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] != 0) continue;
        if (!mid.has_rank() || i >= mid.rank() || !mid[i].is_known()) return false;
        dims[i] = mid[i].value;
        rewritten = true;
      }
    }
    if (rewritten)
      shape = g.add_initializer(shape->name() + "_fused",
                                ir::Tensor::of<int64_t>({static_cast<int64_t>(dims.size())}, dims));
    replace(g, outer, "Reshape", {inner->input(0), shape}, outer->attributes(), {inner}, removed);
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseTranspose,
                   "folds 2-D Transposes into Gemm/MatMul (transA/transB), composes consecutive "
                   "Transposes (dropping identities) and collapses consecutive Reshapes",
                   {{"fuse", 5}});

}  // namespace xopt::passes
