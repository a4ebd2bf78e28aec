// Transpose(Reshape(Concat(x_1..x_G, axis k), [d.., G, s, r..]), swapping dims k and k+1)  ==>
// Reshape(Concat(x_1..x_G, axis k+1), [d.., s, G, r..]).
// The Transpose interleaves the G concatenated parts (ShuffleNet's channel shuffle). Each x_i is
// [d.., s, r_1, r..]; concatenating them along the dim after k puts element (j, g, t) of the
// transposed [s, G, r_1] block at (j, g * r_1 + t), which is where the row-major [s, G, r_1]
// layout has it, so a Reshape gives the transposed result: both sides only move elements.
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

// The k for which `t` swaps dims k and k+1 and keeps every other dim; nullopt otherwise.
std::optional<size_t> adjacent_swap(const ir::Node& t) {
  if (!t.has_attr("perm")) return std::nullopt;
  std::vector<int64_t> p = t.attr_ints("perm");
  std::optional<size_t> k;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == static_cast<int64_t>(i)) continue;
    if (k || i + 1 >= p.size() || p[i] != static_cast<int64_t>(i + 1) ||
        p[i + 1] != static_cast<int64_t>(i))
      return std::nullopt;
    k = i++;
  }
  return k;
}

class FuseChannelShuffle final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-channel-shuffle";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* t, std::unordered_set<const ir::Node*>& removed,
               PassContext& /*ctx*/) override {
    if (!is_onnx_op(*t, "Transpose")) return false;
    auto k = adjacent_swap(*t);
    if (!k) return false;
    ir::Node* reshape = t->input(0)->producer();
    if (reshape == nullptr || !is_onnx_op(*reshape, "Reshape") || reshape->opset() < 5 ||
        reshape->num_inputs() != 2 || sole_reader(reshape->output(0)) != t)
      return false;
    ir::Node* concat = reshape->input(0)->producer();
    if (concat == nullptr || !is_onnx_op(*concat, "Concat") || concat->num_outputs() != 1 ||
        !concat->has_attr("axis") || sole_reader(concat->output(0)) != reshape)
      return false;
    // Concat's result [d.., G*s, r_1, r..] and the Reshape's [d.., G, s, r_1, r..], with the dims
    // from r_1 on known (they move to another position in the new Reshape's shape).
    const ir::Shape& cs = concat->output(0)->shape();
    const ir::Shape& rs = reshape->output(0)->shape();
    const size_t a = *k;
    if (!cs.has_rank() || !rs.has_rank() || rs.rank() != cs.rank() + 1 || a + 1 >= cs.rank())
      return false;
    int64_t axis = concat->attr_int("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(cs.rank());
    if (axis != static_cast<int64_t>(a)) return false;
    const auto parts = static_cast<int64_t>(concat->num_inputs());
    if (parts < 2 || rs[a] != ir::Dim(parts) || !rs[a + 1].is_known() || rs[a + 1].value <= 0)
      return false;
    const int64_t s = rs[a + 1].value;
    for (const ir::Value* x : concat->inputs()) {
      if (x == nullptr || !x->shape().has_rank() || x->shape().rank() != cs.rank() ||
          x->shape()[a] != ir::Dim(s))
        return false;
    }
    for (size_t i = 0; i < cs.rank(); ++i) {
      if (i == a) continue;
      const ir::Dim& d = rs[i < a ? i : i + 1];
      if (d != cs[i] || (i > a && (!d.is_known() || d.value <= 0))) return false;
      if (i < a && d.is_known() && d.value <= 0) return false;  // a 0 would mean "copy"
    }
    // Leading dims the new Concat keeps are copied (0) where not known.
    std::vector<int64_t> shape;
    ir::Shape joined = cs;
    for (size_t i = 0; i < a; ++i) shape.push_back(cs[i].is_known() ? cs[i].value : 0);
    shape.push_back(s);
    shape.push_back(parts);
    for (size_t i = a + 1; i < cs.rank(); ++i) shape.push_back(cs[i].value);
    joined[a] = s;
    joined[a + 1] = parts * cs[a + 1].value;

    ir::Node* cat = g.add_node("Concat", concat->inputs(),
                               {g.unique_name(concat->output(0)->name() + "_interleaved")}, "", t);
    cat->set_attr("axis", static_cast<int64_t>(a + 1));
    cat->set_name(concat->name());
    cat->add_provenance(*concat);
    cat->output(0)->set_dtype(concat->output(0)->dtype());
    cat->output(0)->set_shape(joined);
    ir::Value* target =
        g.add_initializer(reshape->input(1)->name() + "_shuffled",
                          ir::Tensor::of<int64_t>({static_cast<int64_t>(shape.size())}, shape));
    fuse::replace_chain(g, "Reshape", "", {cat->output(0), target}, {}, t->output(0),
                        {t, reshape, concat}, t, removed);
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseChannelShuffle,
                   "turns a Transpose that interleaves the parts of a Concat (Concat, Reshape "
                   "splitting the axis, Transpose) into a Concat on the next axis and a Reshape",
                   {{"fuse", 4}});

}  // namespace xopt::passes
