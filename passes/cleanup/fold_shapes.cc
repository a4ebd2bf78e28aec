// Shape(x) / Size(x) with the dims it reads static  ==>  int64 initializer holding them.
// Gather(Shape(x), k) with constant k and the dims it picks static  ==>  the same, even where other
// dims of x are symbolic (exporters test one dim: `state.shape[0] == 2`, a batch-free check).
//
// When the result is a graph output it becomes a Constant node of the same name instead, so graph
// outputs stay node results.
#include <algorithm>
#include <optional>
#include <vector>

#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

// The dims Shape reads: [start, end) with negative values counted from the back and both clamped
// to [0, rank] (opset 15); the whole shape before that.
std::optional<std::vector<int64_t>> shape_result(const ir::Node* n, const ir::Shape& xs) {
  if (!xs.has_rank()) return std::nullopt;
  auto rank = static_cast<int64_t>(xs.rank());
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(n->attr_int("start", 0));
  int64_t end = clamp(n->attr_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    const ir::Dim& d = xs[static_cast<size_t>(i)];
    if (!d.is_known()) return std::nullopt;
    dims.push_back(d.value);
  }
  return dims;
}

// The dims Gather(Shape(x), indices) picks, when `n` is such a Gather with constant indices and
// every picked dim of x is static: [indices' dims] int64 (a scalar for scalar indices).
std::optional<ir::Tensor> gather_of_shape(const ir::Node* n) {
  if (!n->is("Gather") || n->num_inputs() != 2 || n->num_outputs() != 1) return std::nullopt;
  const ir::Value* data = n->input(0);
  if (data == nullptr || n->input(1) == nullptr || data->producer() == nullptr) return std::nullopt;
  const ir::Node* s = data->producer();
  if (!s->is("Shape") || s->input(0) == nullptr || !s->input(0)->is_tensor()) return std::nullopt;
  const ir::Shape& xs = s->input(0)->shape();
  if (!xs.has_rank()) return std::nullopt;
  auto rank = static_cast<int64_t>(xs.rank());
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t start = clamp(s->attr_int("start", 0));
  const int64_t end = std::max(start, clamp(s->attr_int("end", rank)));
  const int64_t len = end - start;
  const int64_t axis = n->attr_int("axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  std::optional<ir::Tensor> idx = constant_value(n->input(1));
  if (!idx || !ir::is_integer(idx->dtype()) || idx->rank() > 1) return std::nullopt;
  std::vector<int64_t> dims;
  for (int64_t k : idx->to_int64_vector()) {
    if (k < 0) k += len;
    if (k < 0 || k >= len) return std::nullopt;  // out of range: left for the executor to report
    const ir::Dim& d = xs[static_cast<size_t>(start + k)];
    if (!d.is_known()) return std::nullopt;
    dims.push_back(d.value);
  }
  if (idx->rank() == 0) return ir::Tensor::scalar<int64_t>(dims[0]);
  return ir::Tensor::of<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}

class FoldShapes final : public Pass {
 public:
  static constexpr std::string_view kName = "fold-shapes";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    for (ir::Node* n : g.node_list()) {
      if (n->is("Gather")) {
        if (n->input(0) == nullptr || n->input(0)->producer() == nullptr ||
            !n->input(0)->producer()->is("Shape"))
          continue;
        XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
        std::optional<ir::Tensor> picked = gather_of_shape(n);
        if (!picked || n->output(0) == nullptr) continue;
        replace_with_constant(g, n, n->output(0), std::move(*picked));
        ctx.count("Gather");
        changed = true;
        continue;
      }
      if (!(n->is("Shape") || n->is("Size")) || n->num_outputs() != 1) continue;
      ir::Value* x = n->input(0);
      ir::Value* out = n->output(0);
      if (x == nullptr || out == nullptr || !x->is_tensor()) continue;
      XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
      ir::Tensor folded;
      if (n->is("Shape")) {
        auto dims = shape_result(n, x->shape());
        if (!dims) continue;
        folded = ir::Tensor::of<int64_t>({static_cast<int64_t>(dims->size())}, *dims);
      } else {
        auto numel = x->shape().numel();
        if (!numel) continue;
        folded = ir::Tensor::scalar<int64_t>(*numel);
      }
      std::string op = n->op_type();
      replace_with_constant(g, n, out, std::move(folded));
      ctx.count(op);
      changed = true;
    }
    return changed;
  }

 private:
  static void replace_with_constant(ir::Graph& g, ir::Node* n, ir::Value* out, ir::Tensor t) {
    // The replacement takes the result's name, so subgraphs reading it by name still find it.
    std::string name = release_name(g, out);
    ir::Value* c;
    if (out->is_graph_output()) {
      ir::Node* k = g.add_node("Constant", {}, {name}, "", n);
      k->set_name(n->name());
      k->add_provenance(*n);
      onnx::AttributeProto a;
      a.set_name("value");
      a.set_type(onnx::AttributeProto::TENSOR);
      *a.mutable_t() = ir::tensor_to_proto(t);
      k->set_attr(a);
      c = k->output(0);
      c->set_dtype(t.dtype());
      c->set_shape(t.shape());
    } else {
      c = g.add_initializer(name, std::move(t));
    }
    g.replace_all_uses(out, c);
    g.remove_node(n);
  }
};

}  // namespace

// Also first in `fold`, so that fold-constants can finish the Shape -> Gather -> Concat chains
// exporters write (the fuse passes then see constant Reshape/Slice parameters).
XOPT_REGISTER_PASS(FoldShapes, "replaces Shape and Size of statically shaped values by constants",
                   {{"cleanup", 20}, {"fold", 5}});

}  // namespace xopt::passes
