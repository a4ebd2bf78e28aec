// y = Op(x) where Op returns x unchanged  ==>  readers of y read x.
//
// The no-ops: Identity, inference Dropout, Cast to x's type, Reshape/Expand to x's shape, identity
// Transpose, whole-tensor Slice, zero Pad, one-input Concat. A graph output keeps its name: x is
// renamed to it, or, when x's own name must stay too (a graph input), the op becomes an Identity.
#include <cstdint>
#include <limits>
#include <vector>

#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

bool same_shape(const ir::Shape& a, const ir::Shape& b) {
  return a.has_rank() && b.has_rank() && a == b;
}

std::optional<std::vector<int64_t>> constant_ints(const ir::Value* v) {
  auto t = constant_value(v);
  if (!t || !(t->dtype() == ir::DType::kInt64 || t->dtype() == ir::DType::kInt32))
    return std::nullopt;
  return t->to_int64_vector();
}

class EliminateNoops final : public Pass {
 public:
  static constexpr std::string_view kName = "eliminate-noops";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    for (ir::Node* n : g.node_list()) {
      if (!n->domain().empty() || n->num_outputs() == 0) continue;
      ir::Value* out = n->output(0);
      ir::Value* src = n->input(0);
      if (out == nullptr || src == nullptr || !extra_outputs_unused(n)) continue;
      XOPT_ASSIGN_OR_RETURN(bool noop, is_noop(model, ctx, n));
      if (!noop) continue;
      std::string op = n->op_type();  // n is gone after the rewrite
      if (bypass_node(g, n, out, src)) {
        ctx.count(op);
        changed = true;
      } else if (op != "Identity") {
        to_identity(g, n, out, src);
        ctx.count(op + "-to-Identity");
        changed = true;
      }
    }
    return changed;
  }

 private:
  static bool extra_outputs_unused(const ir::Node* n) {
    for (size_t i = 1; i < n->num_outputs(); ++i) {
      const ir::Value* v = n->output(i);
      if (v != nullptr && (v->has_uses() || v->is_graph_output())) return false;
    }
    return true;
  }

  // Both x and y must keep their names: y = Identity(x) stands in for the no-op.
  static void to_identity(ir::Graph& g, ir::Node* n, ir::Value* out, ir::Value* src) {
    std::string name = release_name(g, out);
    ir::Node* id = g.add_node("Identity", {src}, {name}, "", n);
    id->set_name(n->name());
    id->add_provenance(*n);
    id->output(0)->set_dtype(out->dtype());
    id->output(0)->set_shape(out->shape());
    g.replace_all_uses(out, id->output(0));
    g.remove_node(n);
  }

  static Result<bool> is_noop(ir::Model& model, PassContext& ctx, const ir::Node* n) {
    const std::string& op = n->op_type();
    const ir::Value* x = n->input(0);
    const ir::Value* y = n->output(0);
    if (op == "Identity") return true;
    if (op == "Concat") return n->num_inputs() == 1;
    if (op == "Dropout") return dropout_is_noop(n);
    if (op == "Pad") return pad_is_noop(n);
    if (op == "Transpose" && n->has_attr("perm")) {
      auto perm = n->attr_ints("perm");
      for (size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != static_cast<int64_t>(i)) return false;
      return true;
    }
    if (op != "Cast" && op != "CastLike" && op != "Reshape" && op != "Expand" && op != "Slice" &&
        op != "Transpose")
      return false;
    // The rest depend on the input's type or shape.
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    const ir::Shape& xs = x->shape();
    if (op == "Transpose") return xs.has_rank() && xs.rank() <= 1;  // default perm reverses dims
    if (op == "Cast") {
      return x->is_tensor() && x->dtype() != ir::DType::kUndefined &&
             static_cast<int64_t>(x->dtype()) == n->attr_int("to", -1);
    }
    if (op == "CastLike") {
      const ir::Value* like = n->input(1);
      return like != nullptr && x->dtype() != ir::DType::kUndefined && x->dtype() == like->dtype();
    }
    if (op == "Reshape") return reshape_is_noop(n) || same_shape(xs, y->shape());
    if (op == "Expand") return expand_is_noop(n) || same_shape(xs, y->shape());
    return slice_is_noop(n);
  }

  static bool dropout_is_noop(const ir::Node* n) {
    // Dropout-1/6 say whether they run in test mode; 7-11 copy their input at inference; from 12 on
    // training_mode (default false) decides and must be a known false.
    int64_t opset = n->opset();
    if (opset < 7) return n->attr_int("is_test", 0) != 0;
    if (opset < 12) return true;
    const ir::Value* training = n->input(2);
    if (training == nullptr) return true;
    auto t = constant_value(training);
    return t && t->numel() == 1 && t->as_int64(0) == 0;
  }

  static bool pad_is_noop(const ir::Node* n) {
    std::vector<int64_t> pads;
    if (n->opset() < 11) {
      pads = n->attr_ints(n->has_attr("pads") ? "pads" : "paddings");
    } else {
      auto p = constant_ints(n->input(1));
      if (!p) return false;
      pads = *p;
    }
    for (int64_t p : pads)
      if (p != 0) return false;
    return true;
  }

  // Shape given as a constant that reproduces x's dims: each entry equals the dim, is 0 (copy the
  // dim, unless allowzero), or is the single -1 while every other entry matches.
  static bool reshape_is_noop(const ir::Node* n) {
    const ir::Shape& xs = n->input(0)->shape();
    std::vector<int64_t> target;
    if (n->opset() < 5) {
      if (!n->has_attr("shape")) return false;
      target = n->attr_ints("shape");
    } else {
      auto t = constant_ints(n->input(1));
      if (!t) return false;
      target = *t;
    }
    if (!xs.has_rank() || target.size() != xs.rank()) return false;
    bool allowzero = n->attr_int("allowzero", 0) != 0;
    int minus_ones = 0;
    for (size_t i = 0; i < target.size(); ++i) {
      const ir::Dim& d = xs[i];
      if (target[i] == -1) {
        ++minus_ones;
        continue;
      }
      if (target[i] == 0 && !allowzero) continue;
      if (!d.is_known() || d.value != target[i]) return false;
    }
    if (minus_ones == 0) return true;
    if (minus_ones > 1) return false;
    // -1 takes whatever is left; with all other dims equal that is x's dim, unless a zero makes the
    // division undefined.
    for (const ir::Dim& d : xs.dims())
      if (d.is_known() && d.value == 0) return false;
    return true;
  }

  // Broadcasting x to a constant shape whose entries are 1 or x's dim, and no longer than x's rank.
  static bool expand_is_noop(const ir::Node* n) {
    const ir::Shape& xs = n->input(0)->shape();
    auto target = constant_ints(n->input(1));
    if (!target || !xs.has_rank() || target->size() > xs.rank()) return false;
    size_t offset = xs.rank() - target->size();
    for (size_t i = 0; i < target->size(); ++i) {
      int64_t t = (*target)[i];
      const ir::Dim& d = xs[offset + i];
      if (t == 1) continue;
      if (!d.is_known() || d.value != t) return false;
    }
    return true;
  }

  static bool slice_is_noop(const ir::Node* n) {
    const ir::Shape& xs = n->input(0)->shape();
    std::vector<int64_t> starts, ends, axes, steps;
    if (n->opset() < 10) {
      starts = n->attr_ints("starts");
      ends = n->attr_ints("ends");
      axes = n->attr_ints("axes");
    } else {
      auto s = constant_ints(n->input(1));
      auto e = constant_ints(n->input(2));
      if (!s || !e) return false;
      starts = *s;
      ends = *e;
      if (n->input(3) != nullptr) {
        auto a = constant_ints(n->input(3));
        if (!a) return false;
        axes = *a;
      }
      if (n->input(4) != nullptr) {
        auto st = constant_ints(n->input(4));
        if (!st) return false;
        steps = *st;
      }
    }
    if (starts.size() != ends.size()) return false;
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (axes.size() != starts.size() || (!steps.empty() && steps.size() != starts.size()))
      return false;
    for (size_t i = 0; i < starts.size(); ++i) {
      if (!steps.empty() && steps[i] != 1) return false;
      int64_t axis = axes[i];
      if (axis < 0) {
        if (!xs.has_rank()) return false;
        axis += static_cast<int64_t>(xs.rank());
      }
      if (axis < 0 || (xs.has_rank() && axis >= static_cast<int64_t>(xs.rank()))) return false;
      std::optional<int64_t> dim;
      if (xs.has_rank() && xs[static_cast<size_t>(axis)].is_known())
        dim = xs[static_cast<size_t>(axis)].value;
      // Starts and ends clamp to [0, dim] (after adding dim to negatives).
      bool start_ok = starts[i] == 0 || (dim && starts[i] <= -*dim);
      bool end_ok = ends[i] == kInt64Max || (dim && ends[i] >= *dim);
      if (!start_ok || !end_ok) return false;
    }
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(EliminateNoops,
                   "removes ops that return their input unchanged (Identity, inference Dropout, "
                   "same-type Cast, same-shape Reshape/Expand, identity Transpose, full Slice, "
                   "zero Pad, 1-input Concat)",
                   {{"cleanup", 10}, {"fold", 95}});

}  // namespace xopt::passes
