// Conv/ConvTranspose(x, W, b) -> Add(., c), c constant and per output channel ([C,1,1],
// [1,C,1,1], [C] on a 1-D conv, a scalar, ...)  ==>  Conv(x, W, b + c). Sub(conv, c) gives b - c.
#include <optional>
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using fuse::float_values;
using fuse::is_onnx_op;
using fuse::sole_reader;

class FuseConvAdd final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-conv-add";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* n, std::unordered_set<const ir::Node*>& removed,
               PassContext& /*ctx*/) override {
    const bool add = is_onnx_op(*n, "Add");
    if (!add && !is_onnx_op(*n, "Sub")) return false;
    if (n->num_inputs() != 2 || n->opset() < 7) return false;  // before 7: broadcast attributes
    for (size_t i = 0; i < (add ? 2u : 1u); ++i)
      if (fold(g, n, i, add ? 1.0 : -1.0, removed)) return true;
    return false;
  }

 private:
  // Folds input `conv_side` of `op` (a Conv result) and the constant on the other side.
  static bool fold(ir::Graph& g, ir::Node* op, size_t conv_side, double sign,
                   std::unordered_set<const ir::Node*>& removed) {
    ir::Value* y = op->input(conv_side);
    ir::Node* conv = y == nullptr ? nullptr : y->producer();
    if (conv == nullptr || !(is_onnx_op(*conv, "Conv") || is_onnx_op(*conv, "ConvTranspose")))
      return false;
    if (sole_reader(y) != op || conv->num_outputs() != 1) return false;
    // The conv's rank and output channels, from W's shape.
    const ir::Value* w = conv->input(1);
    if (w == nullptr) return false;  // a Conv without W (at an opset our registry has no schema of)
    const ir::Shape& ws = w->shape();
    if (!ws.has_rank() || ws.rank() < 3 || !ws[0].is_known() || !ws[1].is_known()) return false;
    const size_t rank = ws.rank();
    const int64_t group = conv->attr_int("group", 1);
    const int64_t cout = conv->op_type() == "Conv" ? ws[0].value : ws[1].value * group;

    auto c = constant_value(op->input(1 - conv_side));
    if (!c || c->dtype() != y->dtype() || c->rank() > rank) return false;
    auto cv = float_values(*c);
    if (!cv) return false;
    // Right-aligned against [N, C, spatial...], every dim but C's must be 1, C's 1 or cout.
    const auto& cd = c->dims();
    const size_t offset = rank - cd.size();
    bool per_channel_dim = false;
    for (size_t i = 0; i < cd.size(); ++i) {
      if (offset + i == 1 && cd[i] == cout) {
        per_channel_dim = true;
        continue;
      }
      if (cd[i] != 1) return false;
    }
    std::vector<double> bv(cout, 0.0);
    if (conv->input(2) != nullptr) {
      auto b = constant_value(conv->input(2));
      if (!b || b->dtype() != c->dtype() || b->numel() != cout) return false;
      bv = *float_values(*b);
    }
    for (int64_t o = 0; o < cout; ++o) bv[o] += sign * (*cv)[per_channel_dim ? o : 0];

    std::string bname =
        conv->input(2) != nullptr ? conv->input(2)->name() : conv->output(0)->name() + "_bias";
    ir::Value* b2 =
        g.add_initializer(bname + "_fused", fuse::make_float_tensor(c->dtype(), {cout}, bv));
    fuse::replace_chain(g, conv->op_type(), "", {conv->input(0), conv->input(1), b2},
                        conv->attributes(), op->output(0), {conv, op}, op, removed);
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseConvAdd,
                   "folds a constant per-channel Add (or Sub) after Conv or ConvTranspose into "
                   "its bias",
                   {{"fuse", 20}});

}  // namespace xopt::passes
