// Batch split: when the step where the most activation bytes are live lies inside a chain of
// per-item ops (each output item reads only the same item of its one activation input:
// convolutions, pooling, inference normalization, elementwise ops on one activation), the chain
// runs on two halves of the batch instead of the whole:
//
//   x -> [chain] -> y     ==>     x -> Split(axis 0) -> [chain](x0), [chain](x1) -> Concat -> y
//
// so its intermediates hold half a batch at a time (MobileNetV2 at batch 32: its 96x112x112
// expansion is 147 MiB for the whole batch, the arena's peak). Repeated at the new peak while the
// plan's lower bound falls, at most kMaxSplits times; halves are never split again (each split
// costs kernel efficiency at the smaller batch) and a split that does not lower the bound is
// undone. Batch-1 graphs and graphs without static shapes are left alone.
#include <algorithm>
#include <string>
#include <vector>

#include "passes/pass_registry.h"
#include "passes/rewrite.h"
#include "planner/aliasing.h"
#include "planner/lifetimes.h"
#include "planner/planner.h"

namespace xopt::passes {
namespace {

constexpr int kMaxSplits = 4;

bool is_onnx(const ir::Node& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

// Ops whose output item i depends only on item i of their activation input (input 0).
bool per_item_op(const ir::Node& n) {
  static const std::vector<std::string> kOnnx = {
      "Conv",          "ConvTranspose", "MaxPool", "AveragePool",          "GlobalAveragePool",
      "GlobalMaxPool", "LpPool",        "LRN",     "InstanceNormalization"};
  if (is_onnx(n) && std::find(kOnnx.begin(), kOnnx.end(), n.op_type()) != kOnnx.end())
    return n.num_outputs() == 1 || n.op_type() != "MaxPool";
  if (planner::is_fused_conv(n) || planner::is_inference_batch_norm(n)) return true;
  return planner::is_elementwise(n);
}

// One node of a chain as it was: enough to build it again at any batch.
struct Step {
  std::string op, domain, name;
  std::vector<onnx::AttributeProto> attrs;
  std::vector<ir::Value*> inputs;  // nullptr at the activation input (input 0)
  std::string output;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;
};

// The static dims of v when it is an activation of `batch` items along axis 0.
std::optional<std::vector<int64_t>> batch_dims(const ir::Value* v, int64_t batch) {
  if (v == nullptr || !v->is_tensor() || !v->shape().is_static()) return std::nullopt;
  auto d = v->shape().static_dims();
  if (d.empty() || d[0] != batch) return std::nullopt;
  return d;
}

// Node n fits in a chain: per item, one activation input (input 0, `batch` items), every other
// input a constant that does not vary along the batch (an elementwise operand of full rank with
// `batch` leading items would have to be split too), one output of `batch` items read by nobody
// outside by name.
bool fits(const ir::Node& n, int64_t batch) {
  if (!per_item_op(n) || n.num_outputs() != 1 || n.output(0) == nullptr) return false;
  if (n.num_inputs() == 0 || !batch_dims(n.input(0), batch)) return false;
  if (n.input(0)->is_constant()) return false;
  const size_t rank = n.input(0)->shape().rank();
  for (size_t i = 1; i < n.num_inputs(); ++i) {
    const ir::Value* c = n.input(i);
    if (c == nullptr) continue;
    if (!c->is_constant()) return false;
    const auto& cd = c->initializer()->dims();
    if (cd.size() == rank && !cd.empty() && cd[0] != 1 && planner::is_elementwise(n)) return false;
  }
  for (const onnx::AttributeProto& a : n.attributes())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return false;
  return batch_dims(n.output(0), batch).has_value() && !has_implicit_uses(n.output(0));
}

// The longest chain through `center`: each link's output read by the next link only.
std::vector<ir::Node*> chain_through(ir::Node* center, int64_t batch) {
  std::vector<ir::Node*> chain{center};
  for (;;) {
    ir::Value* in = chain.front()->input(0);
    ir::Node* p = in->producer();
    if (p == nullptr || !fits(*p, batch) || in->uses().size() != 1 || name_is_visible(in)) break;
    chain.insert(chain.begin(), p);
  }
  for (;;) {
    ir::Value* out = chain.back()->output(0);
    if (out->uses().size() != 1 || name_is_visible(out)) break;
    ir::Node* u = out->uses().front().node;
    if (!fits(*u, batch) || u->input(0) != out) break;
    bool reads_twice = false;
    for (size_t i = 1; i < u->num_inputs(); ++i) reads_twice |= u->input(i) == out;
    if (reads_twice) break;
    chain.push_back(u);
  }
  return chain;
}

Step describe(const ir::Node& n) {
  Step s{n.op_type(),
         n.domain(),
         n.name(),
         n.attributes(),
         {},
         n.output(0)->name(),
         n.output(0)->dtype(),
         n.output(0)->shape().static_dims()};
  s.inputs.assign(n.inputs().begin(), n.inputs().end());
  s.inputs[0] = nullptr;
  return s;
}

// Builds `steps` on `x` before `before`, each output with `items` along axis 0; the nodes and
// values get `suffix` (empty: the original names). Returns the last output.
ir::Value* emit(ir::Graph& g, const std::vector<Step>& steps, ir::Value* x, int64_t items,
                const std::string& suffix, ir::Node* before) {
  for (const Step& s : steps) {
    std::vector<ir::Value*> in = s.inputs;
    in[0] = x;
    ir::Node* n = g.add_node(s.op, in, {s.output + suffix}, s.domain, before);
    n->set_name(s.name.empty() ? "" : g.unique_name(s.name + suffix));
    for (const onnx::AttributeProto& a : s.attrs) n->set_attr(a);
    std::vector<int64_t> d = s.dims;
    d[0] = items;
    x = n->output(0);
    x->set_dtype(s.dtype);
    x->set_shape(ir::Shape::of(d));
  }
  return x;
}

// Live bytes per step of the graph's own order (aliases share their root's bytes).
Result<std::vector<size_t>> live_bytes(const ir::Graph& g, const planner::PlanOptions& po,
                                       size_t* lower_bound) {
  XOPT_ASSIGN_OR_RETURN(planner::MemoryPlan p, planner::plan(g, po));
  std::vector<size_t> live(g.num_nodes(), 0);
  for (const planner::PlannedValue& v : p.values) {
    if (!v.alias_of.empty()) continue;
    for (int s = std::max(v.first_step, 0); s <= v.last_step && s < static_cast<int>(live.size());
         ++s)
      live[static_cast<size_t>(s)] += v.size;
  }
  *lower_bound = p.lower_bound;
  return live;
}

class SplitBatch final : public Pass {
 public:
  static constexpr std::string_view kName = "split-batch";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    ir::Graph& g = *model.graph;
    planner::PlanOptions po;
    po.alignment = ctx.options().plan_alignment;
    po.io_in_arena = ctx.options().plan_io_in_arena;
    po.workspace = false;
    po.strategies = {"naive"};  // only the lower bound is read: the cheapest offsets do
    bool changed = false;
    std::vector<const ir::Node*> refused;  // chains tried and undone (by their first node)
    std::vector<const ir::Node*> made;     // halves made here: never split again
    for (int round = 0; round < kMaxSplits; ++round) {
      size_t before_bound = 0;
      auto live = live_bytes(g, po, &before_bound);
      if (!live.is_ok()) {
        ctx.count("skipped-not-static");
        return changed;
      }
      const std::vector<ir::Node*> order = g.node_list();
      const size_t peak =
          static_cast<size_t>(std::max_element(live->begin(), live->end()) - live->begin());
      if (peak >= order.size()) return changed;
      ir::Node* center = order[peak];
      if (center->num_inputs() == 0 || center->input(0) == nullptr) return changed;
      auto xd = center->input(0)->shape().is_static()
                    ? std::optional(center->input(0)->shape().static_dims())
                    : std::nullopt;
      if (!xd || xd->empty() || (*xd)[0] < 2 || (*xd)[0] % 2 != 0) return changed;
      const int64_t batch = (*xd)[0];
      if (!fits(*center, batch) || std::find(made.begin(), made.end(), center) != made.end())
        return changed;
      std::vector<ir::Node*> chain = chain_through(center, batch);
      if (std::find(refused.begin(), refused.end(), chain.front()) != refused.end()) return changed;

      // Take the chain out, keeping what rebuilds it.
      std::vector<Step> steps;
      steps.reserve(chain.size());
      for (const ir::Node* n : chain) steps.push_back(describe(*n));
      ir::Value* x = chain.front()->input(0);
      ir::Value* y = chain.back()->output(0);
      const std::string y_name = release_name(g, y);
      // Split -> two half chains -> Concat under y's name.
      const int64_t half = batch / 2;
      ir::Node* first = chain.front();
      ir::Node* split = nullptr;
      ir::Value* sizes = nullptr;
      const std::string base = g.unique_name(steps.front().output + "_half");
      if (g.opset("") >= 13) {
        sizes = g.add_initializer(base + "_sizes", ir::Tensor::of<int64_t>({2}, {half, half}));
        split = g.add_node("Split", {x, sizes}, {base + "0_in", base + "1_in"}, "", first);
      } else {
        split = g.add_node("Split", {x}, {base + "0_in", base + "1_in"}, "", first);
        split->set_attr("split", std::vector<int64_t>{half, half});
      }
      split->set_name(g.unique_name(base + "_split"));
      split->set_attr("axis", int64_t{0});
      std::vector<int64_t> in_dims = x->shape().static_dims();  // fits() made it static
      in_dims[0] = half;
      for (size_t k = 0; k < 2; ++k) {
        split->output(k)->set_dtype(x->dtype());
        split->output(k)->set_shape(ir::Shape::of(in_dims));
      }
      ir::Value* y0 = emit(g, steps, split->output(0), half, "_half0", first);
      ir::Value* y1 = emit(g, steps, split->output(1), half, "_half1", first);
      ir::Node* concat = g.add_node("Concat", {y0, y1}, {y_name}, "", first);
      concat->set_name(g.unique_name(base + "_concat"));
      concat->set_attr("axis", int64_t{0});
      concat->output(0)->set_dtype(steps.back().dtype);
      concat->output(0)->set_shape(ir::Shape::of(steps.back().dims));
      g.replace_all_uses(y, concat->output(0));
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) g.remove_node(*it);

      size_t after_bound = 0;
      auto after = live_bytes(g, po, &after_bound);
      if (after.is_ok() && after_bound < before_bound) {
        for (ir::Value* h : {y0, y1})
          for (ir::Node* n = h->producer(); n != split; n = n->input(0)->producer())
            made.push_back(n);
        ctx.count("chains-split");
        ctx.count("nodes-in-chains", static_cast<int64_t>(steps.size()));
        ctx.count("bound-bytes-saved", static_cast<int64_t>(before_bound - after_bound));
        changed = true;
        continue;
      }
      // No better: build the chain back at the whole batch under its own names.
      ir::Value* cy = concat->output(0);
      const std::string cy_name = release_name(g, cy);
      std::vector<Step> whole = steps;
      whole.back().output = cy_name;
      ir::Value* back = emit(g, whole, x, batch, "", concat);
      g.replace_all_uses(cy, back);
      std::vector<ir::Node*> dead{concat};
      for (ir::Value* h : {y1, y0})
        for (ir::Node* n = h->producer(); n != nullptr && n != split; n = n->input(0)->producer())
          dead.push_back(n);
      dead.push_back(split);
      for (ir::Node* n : dead) g.remove_node(n);
      if (sizes != nullptr) g.remove_initializer(sizes);
      ir::Node* head = back->producer();
      while (head->input(0) != x) head = head->input(0)->producer();
      refused.push_back(head);
      ctx.count("splits-undone");
    }
    return changed;
  }
};

}  // namespace

XOPT_REGISTER_PASS(SplitBatch,
                   "runs the chain of per-item ops (convolutions, pooling, elementwise) around "
                   "the activation peak on two halves of the batch, when that lowers the peak",
                   {{"plan", 5}});

}  // namespace xopt::passes
