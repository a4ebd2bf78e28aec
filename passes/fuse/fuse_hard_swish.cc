// Clip(x + 3, 0, 6) / 6  ==>  HardSigmoid(x) <alpha = 1/6, beta = 0.5>;
// x * Clip(x + 3, 0, 6) / 6  ==>  HardSwish(x);
// x * HardSigmoid(x) <alpha = 1/6, beta = 0.5>  ==>  HardSwish(x).
//
// HardSwish needs opset 14: an older model is raised to 14 where every node in it keeps its meaning
// (fuse/opset_upgrade.h); where not, x * Clip(x + 3, 0, 6) / 6 becomes x * HardSigmoid(x).
//
// The written-out forms are how MobileNetV3-style models come out of exporters that have no
// HardSwish (Paddle2ONNX, PyTorch before opset 14, TF converters). The division by 6 may be a Mul
// by 1/6 and may come before or after the Mul by x; Add, Mul and the scaling take their operands
// in either order. Float only: onnxruntime's CPU kernels for both ops take nothing else.
//
// Not in a dynamically quantized model (DynamicQuantizeLinear, com.microsoft DynamicQuantizeMatMul
// or DynamicQuantizeLSTM): the fused ops round differently from the written-out formula, and the
// on-the-fly quantization after them turns one-ulp differences into whole quantization steps
// (PP-OCRv4's recognizer after quantize_dynamic: 8.7e-2 off onnxruntime's output, cosine 0.999).
#include <algorithm>
#include <optional>
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/fuse/opset_upgrade.h"
#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using fuse::sole_reader;
using xfmr::near;
using xfmr::other_input;
using xfmr::scalar_constant;

constexpr double kSixth = 1.0 / 6.0;

// Clip's bounds when both are known constants (attributes before opset 11, inputs after).
std::optional<std::pair<double, double>> clip_bounds(const ir::Node& c) {
  if (c.opset() < 11)
    return std::make_pair(static_cast<double>(c.attr_float("min", -3.4028234663852886e38f)),
                          static_cast<double>(c.attr_float("max", 3.4028234663852886e38f)));
  auto lo = c.input(1) == nullptr ? std::nullopt : scalar_constant(c.input(1));
  auto hi = c.input(2) == nullptr ? std::nullopt : scalar_constant(c.input(2));
  if (!lo || !hi) return std::nullopt;
  return std::make_pair(*lo, *hi);
}

// The node reading `v` as its only reader when it scales `v` by 1/6: Div(v, 6) or Mul(v, 1/6).
ir::Node* sixth_of(const ir::Value* v) {
  ir::Node* r = sole_reader(v);
  if (r == nullptr || r->num_inputs() != 2) return nullptr;
  if (is_onnx_op(*r, "Div") && r->input(0) == v) {
    auto k = scalar_constant(r->input(1));
    return k && near(*k, 6.0, 1e-6) ? r : nullptr;
  }
  if (is_onnx_op(*r, "Mul")) {
    ir::Value* k = other_input(r, v);
    auto kv = k == nullptr ? std::nullopt : scalar_constant(k);
    return kv && near(*kv, kSixth, 1e-4) ? r : nullptr;
  }
  return nullptr;
}

// The Mul reading `v` (as its only reader) with `x` as the other operand.
ir::Node* times(const ir::Value* v, const ir::Value* x) {
  ir::Node* r = sole_reader(v);
  return r != nullptr && is_onnx_op(*r, "Mul") && other_input(r, v) == x ? r : nullptr;
}

bool dynamically_quantized(const ir::Graph& g) {
  for (const ir::Node* n : g.nodes())
    if (is_onnx_op(*n, "DynamicQuantizeLinear") ||
        (n->domain() == "com.microsoft" &&
         (n->op_type() == "DynamicQuantizeMatMul" || n->op_type() == "DynamicQuantizeLSTM")))
      return true;
  return false;
}

class FuseHardSwish final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-hard-swish";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* n, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    // An omitted optional output is null (found by fuzz/fuzz_model.cc).
    if (n->num_outputs() < 1 || n->output(0) == nullptr ||
        n->output(0)->dtype() != ir::DType::kFloat)
      return false;
    if (is_onnx_op(*n, "Mul")) return from_hard_sigmoid(g, n, removed, ctx);
    if (!is_onnx_op(*n, "Clip") || n->opset() < 6) return false;
    // Clip(x + 3, 0, 6).
    auto bounds = clip_bounds(*n);
    if (!bounds || bounds->first != 0.0 || !near(bounds->second, 6.0, 1e-6)) return false;
    ir::Value* a = n->input(0);
    ir::Node* add = a->producer();
    if (add == nullptr || !is_onnx_op(*add, "Add") || sole_reader(a) != n) return false;
    ir::Value* x = nullptr;
    for (size_t i = 0; i < 2 && x == nullptr; ++i) {
      auto k = scalar_constant(add->input(1 - i));
      if (k && near(*k, 3.0, 1e-6)) x = add->input(i);
    }
    if (x == nullptr || !(a->shape() == x->shape())) return false;
    std::vector<ir::Node*> chain{add, n};
    ir::Value* h = n->output(0);
    // Clip(.) / 6 [* x], or (x * Clip(.)) / 6.
    ir::Node* mul = nullptr;
    ir::Node* scale = sixth_of(h);
    if (scale != nullptr) {
      mul = times(scale->output(0), x);
    } else if ((mul = times(h, x)) != nullptr) {
      scale = sixth_of(mul->output(0));
    }
    if (scale == nullptr) return false;
    // In the order the data flows: the last one produces the result.
    const bool scale_first =
        mul == nullptr || mul->input(0) == scale->output(0) || mul->input(1) == scale->output(0);
    for (ir::Node* c : scale_first ? std::vector{scale, mul} : std::vector{mul, scale})
      if (c != nullptr) chain.push_back(c);
    ir::Value* result = chain.back()->output(0);
    if (!(result->shape() == x->shape()) || dynamically_quantized(g)) return false;
    // The result's producer first: the fused node takes its name.
    std::reverse(chain.begin(), chain.end());
    if (mul == nullptr) {
      fuse::replace_chain(g, "HardSigmoid", "", {x}, hard_sigmoid_attrs(), result, chain, n,
                          removed);
      ctx.count("HardSigmoid");
    } else if (hard_swish_available(g, ctx)) {
      fuse::replace_chain(g, "HardSwish", "", {x}, {}, result, chain, n, removed);
      ctx.count("HardSwish");
    } else {
      // No HardSwish before opset 14: x * HardSigmoid(x), two nodes instead of four.
      ir::Node* hs = g.add_node("HardSigmoid", {x}, {h->name() + "_hsig"}, "", n);
      for (const auto& attr : hard_sigmoid_attrs()) hs->set_attr(attr);
      hs->output(0)->set_dtype(x->dtype());
      hs->output(0)->set_shape(x->shape());
      for (const ir::Node* r : chain) hs->add_provenance(*r);
      fuse::replace_chain(g, "Mul", "", {x, hs->output(0)}, {}, result, chain, n, removed);
      ctx.count("HardSigmoid");
    }
    return true;
  }

 private:
  // True when the model has HardSwish (opset 14), after raising its opset if need be.
  bool hard_swish_available(ir::Graph& g, PassContext& ctx) {
    if (g.opset("") >= 14) return true;
    if (model_ == nullptr || !fuse::opset_upgrade_blocker(*model_, 14).empty()) return false;
    fuse::upgrade_default_opset(*model_, 14);
    ctx.count("opset-upgrade");
    return true;
  }

  static std::vector<onnx::AttributeProto> hard_sigmoid_attrs() {
    onnx::AttributeProto alpha, beta;
    alpha.set_name("alpha");
    alpha.set_type(onnx::AttributeProto::FLOAT);
    alpha.set_f(static_cast<float>(kSixth));
    beta.set_name("beta");
    beta.set_type(onnx::AttributeProto::FLOAT);
    beta.set_f(0.5f);
    return {alpha, beta};
  }

  // Mul(x, HardSigmoid(x) <1/6, 0.5>), either order  ==>  HardSwish(x).
  bool from_hard_sigmoid(ir::Graph& g, ir::Node* mul, std::unordered_set<const ir::Node*>& removed,
                         PassContext& ctx) {
    if (mul->num_inputs() != 2) return false;
    for (size_t i = 0; i < 2; ++i) {
      ir::Value* x = mul->input(i);
      ir::Value* s = mul->input(1 - i);
      ir::Node* hs = s == nullptr ? nullptr : s->producer();
      if (hs == nullptr || !is_onnx_op(*hs, "HardSigmoid") || hs->input(0) != x ||
          sole_reader(s) != mul)
        continue;
      if (!near(hs->attr_float("alpha", 0.2f), kSixth, 1e-4) ||
          !near(hs->attr_float("beta", 0.5f), 0.5, 1e-6) ||
          !(mul->output(0)->shape() == x->shape()) || dynamically_quantized(g) ||
          !hard_swish_available(g, ctx))
        continue;
      fuse::replace_chain(g, "HardSwish", "", {x}, {}, mul->output(0), {mul, hs}, mul, removed);
      ctx.count("HardSwish");
      return true;
    }
    return false;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseHardSwish,
                   "fuses x * Clip(x + 3, 0, 6) / 6 into HardSwish and Clip(x + 3, 0, 6) / 6 into "
                   "HardSigmoid",
                   {{"fuse", 6}});

}  // namespace xopt::passes
