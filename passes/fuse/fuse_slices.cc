// Slice(x, s_i, e_i, [axis], [1]) for i = 1..n, whose ranges tile x's dim along axis  ==>
// Split(x, [e_1 - s_1, ..., e_n - s_n]) <axis>.
// One Split reads x once instead of n Slices each reading it (PyTorch exports x[:, :c] and
// x[:, c:] as two Slices). Only Slices with constant starts/ends/axes, one axis and unit steps,
// on a known dim, take part; the ranges must cover the dim without gap or overlap.
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;

std::optional<std::vector<int64_t>> constant_ints(const ir::Value* v) {
  auto t = constant_value(v);
  if (!t || !(t->dtype() == ir::DType::kInt64 || t->dtype() == ir::DType::kInt32))
    return std::nullopt;
  return t->to_int64_vector();
}

// One Slice of x: [start, end) along `axis`, normalized against the dim.
struct Range {
  ir::Node* slice;
  int64_t axis, start, end;
};

// The range a Slice (opset >= 10) of a statically sized dim takes, when it is one known range
// with step 1.
std::optional<Range> slice_range(ir::Node* n) {
  if (!is_onnx_op(*n, "Slice") || n->opset() < 10 || n->num_outputs() != 1) return std::nullopt;
  const ir::Shape& xs = n->input(0)->shape();
  if (!xs.has_rank()) return std::nullopt;
  auto starts = constant_ints(n->input(1));
  auto ends = constant_ints(n->input(2));
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  int64_t axis = 0;
  if (n->input(3) != nullptr) {
    auto axes = constant_ints(n->input(3));
    if (!axes || axes->size() != 1) return std::nullopt;
    axis = (*axes)[0];
  }
  if (n->input(4) != nullptr) {
    auto steps = constant_ints(n->input(4));
    if (!steps || *steps != std::vector<int64_t>{1}) return std::nullopt;
  }
  const auto rank = static_cast<int64_t>(xs.rank());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || !xs[static_cast<size_t>(axis)].is_known()) return std::nullopt;
  const int64_t dim = xs[static_cast<size_t>(axis)].value;
  auto clamp = [dim](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + dim : i, 0, dim); };
  return Range{n, axis, clamp((*starts)[0]), clamp((*ends)[0])};
}

class FuseSlices final : public Pass {
 public:
  static constexpr std::string_view kName = "fuse-slices";
  std::string_view name() const override { return kName; }
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    bool changed = false;
    std::unordered_set<const ir::Value*> seen;
    std::unordered_set<const ir::Node*> removed;
    xfmr::ConstantPool pool;  // one initializer per distinct list of sizes
    const std::vector<ir::Node*> nodes = g.node_list();
    std::unordered_map<const ir::Node*, size_t> position;
    for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = i;
    for (ir::Node* n : nodes) {
      if (removed.count(n) || !is_onnx_op(*n, "Slice") || !seen.insert(n->input(0)).second)
        continue;
      const ir::Value* x = n->input(0);
      std::map<int64_t, std::vector<Range>> by_axis;
      for (const ir::Use& u : x->uses()) {
        if (u.index != 0) continue;
        if (auto r = slice_range(u.node)) by_axis[r->axis].push_back(*r);
      }
      for (auto& [axis, ranges] : by_axis) {
        if (!tiles(ranges, x->shape()[static_cast<size_t>(axis)].value)) continue;
        // In place of the first of them in node order, the Split precedes all their readers.
        ir::Node* first =
            std::min_element(ranges.begin(), ranges.end(), [&](const Range& a, const Range& b) {
              return position[a.slice] < position[b.slice];
            })->slice;
        split(g, first, axis, ranges, pool, removed);
        ctx.count(kName);
        ctx.count("slices", static_cast<int64_t>(ranges.size()));
        changed = true;
      }
    }
    return changed;
  }

 private:
  // Sorts `ranges` by start; true when there are at least two, none empty, covering [0, dim).
  static bool tiles(std::vector<Range>& ranges, int64_t dim) {
    if (ranges.size() < 2) return false;
    std::sort(ranges.begin(), ranges.end(),
              [](const Range& a, const Range& b) { return a.start < b.start; });
    int64_t at = 0;
    for (const Range& r : ranges) {
      if (r.start != at || r.end <= r.start) return false;
      at = r.end;
    }
    return at == dim;
  }

  // Replaces the Slices of `ranges` (sorted, tiling the axis) by one Split before `anchor`, one of
  // them, whose name it takes. Removed nodes (the Slices, Constants only they read) go to
  // `removed`.
  static void split(ir::Graph& g, ir::Node* anchor, int64_t axis, const std::vector<Range>& ranges,
                    xfmr::ConstantPool& pool, std::unordered_set<const ir::Node*>& removed) {
    ir::Value* x = anchor->input(0);
    std::vector<int64_t> sizes;
    std::vector<std::string> names;
    for (const Range& r : ranges) {
      sizes.push_back(r.end - r.start);
      names.push_back(release_name(g, r.slice->output(0)));
    }
    std::vector<ir::Value*> inputs = {x};
    const bool split_input = anchor->opset() >= 13;
    if (split_input)
      inputs.push_back(
          pool.get(g, anchor->name().empty() ? "split" : anchor->name() + "_split",
                   ir::Tensor::of<int64_t>({static_cast<int64_t>(sizes.size())}, sizes)));
    ir::Node* s = g.add_node("Split", inputs, names, "", anchor);
    s->set_attr("axis", axis);
    if (!split_input) s->set_attr("split", sizes);
    s->set_name(anchor->name());
    for (size_t i = 0; i < ranges.size(); ++i) {
      ir::Node* slice = ranges[i].slice;
      ir::Value* old = slice->output(0);
      s->output(i)->set_dtype(old->dtype());
      s->output(i)->set_shape(old->shape());
      s->add_provenance(*slice);
      g.replace_all_uses(old, s->output(i));
      std::vector<ir::Value*> read = slice->inputs();
      removed.insert(slice);
      g.remove_node(slice);
      for (ir::Value* v : read)
        if (v != nullptr && v != x) fuse::drop_if_unused(g, v, &removed);
    }
  }
};

}  // namespace

// Late in the fuse group: fuse-attention reads the Slices of a packed Q/K/V projection.
XOPT_REGISTER_PASS(FuseSlices,
                   "merges Slices that tile one axis of a value (constant bounds, step 1) into "
                   "one Split",
                   {{"fuse", 60}});

}  // namespace xopt::passes
