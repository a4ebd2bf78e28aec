// Pad(x) <constant mode, spatial pads p >= 0>  ->  Conv | AveragePool | MaxPool  ==>
// the same op on x with p added to its own pads.
//
// Conv pads with zeros, so the Pad's value must be 0. AveragePool with count_include_pad = 1
// divides by the whole window, counting pad positions as zeros: exactly what averaging the
// explicitly padded tensor does, so a zero Pad joins one that counts its pads, or one without pads
// of its own (count_include_pad is then set); ceil_mode must be off, so that no window reaches
// past the padded tensor (where the divisor would shrink). MaxPool ignores its pad positions,
// while the explicit Pad's values take part in the max: the two agree only when every window holds
// a real element no smaller than the pad value, i.e. when the value is -inf (or the lowest finite
// value), or when it is <= 0 and x is known to be >= 0 (x comes from Relu, Sigmoid, a Clip or
// fused activation with a non-negative floor, ...), and when each side's total pad is smaller than
// the kernel (so no window is all padding). Pads of the batch and channel dims, negative pads,
// other modes, an `axes` input, auto_pad SAME_*, dilations and MaxPool's Indices output: left.
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;

struct PadSpec {
  std::vector<int64_t> pads;  // [d0_begin, d1_begin, ..., d0_end, d1_end, ...]
  double value = 0;
};

// The Pad's pads and constant value when it is a constant-mode Pad with both known.
std::optional<PadSpec> read_pad(const ir::Node& p) {
  if (p.attr_string("mode", "constant") != "constant") return std::nullopt;
  PadSpec s;
  if (p.opset() < 11) {
    s.pads = p.attr_ints(p.has_attr("pads") ? "pads" : "paddings");
    s.value = p.attr_float("value", 0.0f);
    return s;
  }
  if (p.num_inputs() > 3 && p.input(3) != nullptr) return std::nullopt;  // axes (opset 18)
  auto pads = p.input(1) == nullptr ? std::nullopt : constant_value(p.input(1));
  if (!pads) return std::nullopt;
  s.pads = pads->to_int64_vector();
  if (p.num_inputs() > 2 && p.input(2) != nullptr) {
    auto v = xfmr::scalar_constant(p.input(2));
    if (!v) return std::nullopt;
    s.value = *v;
  }
  return s;
}

// True when every element of `v` is known to be >= 0 from the op producing it.
bool non_negative(const ir::Value* v) {
  const ir::Node* n = v->producer();
  if (n == nullptr) return false;
  for (const char* op : {"Relu", "Sigmoid", "HardSigmoid", "Softplus", "Abs", "Exp", "Softmax"})
    if (is_onnx_op(*n, op)) return true;
  if (is_onnx_op(*n, "Clip")) {
    if (n->opset() < 11) return n->has_attr("min") && n->attr_float("min", -1.0f) >= 0.0f;
    auto lo = n->num_inputs() > 1 && n->input(1) != nullptr ? xfmr::scalar_constant(n->input(1))
                                                            : std::nullopt;
    return lo && *lo >= 0.0;
  }
  if ((n->op_type() == "FusedConv" || n->op_type() == "FusedGemm") &&
      n->domain() == "com.microsoft") {
    const std::string act = n->attr_string("activation", "");
    if (act == "Relu" || act == "Sigmoid" || act == "HardSigmoid") return true;
    if (act == "Clip") {
      auto params = n->attr_floats("activation_params");
      return !params.empty() && params[0] >= 0.0f;
    }
  }
  return false;
}

bool all_ones(const std::vector<int64_t>& v) {
  for (int64_t d : v)
    if (d != 1) return false;
  return true;
}

class FusePad final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-pad";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* pad, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    if (!is_onnx_op(*pad, "Pad") || pad->opset() < 2) return false;
    ir::Value* x = pad->input(0);
    ir::Value* y = pad->output(0);
    if (name_is_visible(y) || y->uses().empty() || !x->shape().has_rank()) return false;
    const auto rank = static_cast<int64_t>(x->shape().rank());
    auto spec = read_pad(*pad);
    if (rank < 3 || !spec || static_cast<int64_t>(spec->pads.size()) != 2 * rank) return false;
    const std::vector<int64_t>& p = spec->pads;
    if (p[0] != 0 || p[1] != 0 || p[rank] != 0 || p[rank + 1] != 0) return false;
    for (int64_t v : p)
      if (v < 0) return false;
    // Every reader takes the padding over (one Pad shared by several pools after cse), or none.
    std::vector<std::pair<ir::Node*, Fold>> folds;
    for (const ir::Use& u : y->uses()) {
      auto f = u.index == 0 ? plan(*u.node, *spec, rank, x) : std::nullopt;
      if (!f) return false;
      folds.emplace_back(u.node, *f);
    }
    for (auto& [op, f] : folds) {
      if (f.drop_auto_pad) op->remove_attr("auto_pad");
      op->set_attr("pads", f.pads);
      if (f.count_include_pad) op->set_attr("count_include_pad", int64_t{1});
      op->replace_input(y, x);
      op->add_provenance(*pad);
      ctx.count(f.what);
    }
    std::vector<ir::Value*> inputs = pad->inputs();
    g.remove_node(pad);
    removed.insert(pad);
    for (ir::Value* v : inputs)
      if (v != nullptr && v != x) fuse::drop_if_unused(g, v, &removed);
    return true;
  }

 private:
  struct Fold {
    std::vector<int64_t> pads;  // the reader's new pads
    bool drop_auto_pad = false;
    bool count_include_pad = false;
    const char* what = "conv";
  };

  // How reader `op` takes over the padding `spec` of x (rank `rank`); nullopt when it cannot.
  static std::optional<Fold> plan(const ir::Node& op, const PadSpec& spec, int64_t rank,
                                  const ir::Value* x) {
    const std::vector<int64_t>& p = spec.pads;
    const bool conv =
        is_onnx_op(op, "Conv") || (op.op_type() == "FusedConv" && op.domain() == "com.microsoft");
    const bool avg = is_onnx_op(op, "AveragePool");
    const bool max = is_onnx_op(op, "MaxPool");
    if (!conv && !avg && !max) return std::nullopt;
    const std::string auto_pad = op.attr_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return std::nullopt;
    const int64_t spatial = rank - 2;
    std::vector<int64_t> own = auto_pad == "VALID" ? std::vector<int64_t>{} : op.attr_ints("pads");
    if (own.empty()) own.assign(static_cast<size_t>(2 * spatial), 0);
    if (static_cast<int64_t>(own.size()) != 2 * spatial) return std::nullopt;
    Fold f;
    f.drop_auto_pad = auto_pad == "VALID";
    f.pads = own;
    for (int64_t i = 0; i < spatial; ++i) {
      f.pads[i] += p[2 + i];
      f.pads[spatial + i] += p[rank + 2 + i];
    }
    if (conv) return spec.value == 0.0 ? std::optional<Fold>(f) : std::nullopt;
    if (op.attr_int("ceil_mode", 0) != 0 || !all_ones(op.attr_ints("dilations")))
      return std::nullopt;
    if (avg) {
      if (spec.value != 0.0) return std::nullopt;
      bool own_zero = true;
      for (int64_t v : own) own_zero = own_zero && v == 0;
      if (op.attr_int("count_include_pad", 0) == 0 && !own_zero) return std::nullopt;
      f.count_include_pad = true;
      f.what = "average-pool";
      return f;
    }
    if (op.num_outputs() > 1 && op.output(1) != nullptr) return std::nullopt;
    const double lowest = std::numeric_limits<float>::lowest();
    if (!(spec.value <= lowest || (spec.value <= 0.0 && non_negative(x)))) return std::nullopt;
    const std::vector<int64_t> k = op.attr_ints("kernel_shape");
    if (static_cast<int64_t>(k.size()) != spatial) return std::nullopt;
    for (int64_t i = 0; i < spatial; ++i)
      if (f.pads[i] >= k[i] || f.pads[spatial + i] >= k[i]) return std::nullopt;
    f.what = "max-pool";
    return f;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FusePad,
                   "folds a constant-mode Pad of the spatial dims into the pads of the Conv, "
                   "AveragePool or MaxPool reading it",
                   {{"fuse", 8}});

}  // namespace xopt::passes
