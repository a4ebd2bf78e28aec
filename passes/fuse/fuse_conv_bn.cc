// Conv/ConvTranspose(x, W, b) -> BatchNormalization  ==>  Conv(x, W', b');
// Gemm(A, B, C) or MatMul(A, B) -> BatchNormalization, B constant  ==>  Gemm(A, B', C');
// BatchNormalization -> Conv(., W, b) without padding  ==>  Conv(x, W', b').
// Inference BatchNormalization is y = x * s + t per channel, s = scale / sqrt(var + eps),
// t = bias - mean * s; the affine map moves into the weights of the op beside it.
#include <cmath>
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
using fuse::make_float_tensor;
using fuse::sole_reader;

struct Affine {
  ir::DType dtype;
  std::vector<double> s, t;  // per channel
};

// The per-channel affine map of an inference-mode BatchNormalization with constant parameters.
std::optional<Affine> bn_affine(const ir::Node& bn) {
  if (!is_onnx_op(bn, "BatchNormalization") || bn.num_inputs() < 5) return std::nullopt;
  const int64_t opset = bn.opset();
  if (opset < 7 && bn.attr_int("is_test", 0) == 0) return std::nullopt;
  if (opset < 9 && bn.attr_int("spatial", 1) == 0) return std::nullopt;
  if (opset >= 14 && bn.attr_int("training_mode", 0) != 0) return std::nullopt;
  // Running statistics or saved batch statistics as outputs mean training.
  for (size_t i = 1; i < bn.num_outputs(); ++i)
    if (bn.output(i) != nullptr) return std::nullopt;
  std::vector<std::vector<double>> p;
  ir::DType dtype = ir::DType::kUndefined;
  for (size_t i = 1; i <= 4; ++i) {
    auto t = constant_value(bn.input(i));
    if (!t || t->rank() != 1) return std::nullopt;
    auto v = float_values(*t);
    if (!v) return std::nullopt;
    if (i == 1) dtype = t->dtype();
    if (t->dtype() != dtype || (i > 1 && v->size() != p[0].size())) return std::nullopt;
    p.push_back(std::move(*v));
  }
  double eps = bn.attr_float("epsilon", 1e-5f);
  Affine a{dtype, {}, {}};
  for (size_t c = 0; c < p[0].size(); ++c) {
    double s = p[0][c] / std::sqrt(p[3][c] + eps);
    a.s.push_back(s);
    a.t.push_back(p[1][c] - p[2][c] * s);
  }
  return a;
}

// A constant tensor of float `dtype`; `values` is filled for small ones (biases) only, while
// large weights are rescaled in their own type (fuse::scale_blocks).
struct Weight {
  ir::Tensor tensor;
  std::vector<double> values;
};
std::optional<Weight> constant_weight(const ir::Value* v, ir::DType dtype, bool with_values) {
  auto t = constant_value(v);
  if (!t || t->dtype() != dtype) return std::nullopt;
  std::vector<double> values;
  if (with_values) values = *float_values(*t);
  return Weight{std::move(*t), std::move(values)};
}

// The bias input of `n` (or a name made from its result when it has none) with "_fused".
std::string bias_name(const ir::Node& n, size_t input) {
  const ir::Value* b = n.input(input);
  return (b != nullptr ? b->name() : n.output(0)->name() + "_bias") + "_fused";
}

class FuseConvBn final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-conv-bn";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* bn, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    if (!is_onnx_op(*bn, "BatchNormalization")) return false;
    auto affine = bn_affine(*bn);
    if (!affine) return false;
    const char* how = nullptr;
    if (into_conv_before(g, bn, *affine, removed))
      how = "into-conv";
    else if (into_gemm_before(g, bn, *affine, removed))
      how = "into-gemm";
    else if (into_conv_after(g, bn, *affine, removed))
      how = "into-following-conv";
    if (how == nullptr) return false;
    ctx.count(how);
    return true;
  }

 private:
  // Conv: W [Cout, Cin/g, k...] scales by output channel. ConvTranspose: W [Cin, Cout/g, k...],
  // output channel of W[ci, j] is (ci / (Cin/g)) * (Cout/g) + j.
  static bool into_conv_before(ir::Graph& g, ir::Node* bn, const Affine& a,
                               std::unordered_set<const ir::Node*>& removed) {
    ir::Node* conv = bn->input(0)->producer();
    if (conv == nullptr || !(is_onnx_op(*conv, "Conv") || is_onnx_op(*conv, "ConvTranspose")))
      return false;
    if (sole_reader(conv->output(0)) != bn || conv->num_outputs() != 1) return false;
    auto w = constant_weight(conv->input(1), a.dtype, false);
    if (!w || w->tensor.rank() < 3) return false;
    std::optional<Weight> b;
    if (conv->input(2) != nullptr) {
      b = constant_weight(conv->input(2), a.dtype, true);
      if (!b) return false;
    }
    const auto& dims = w->tensor.dims();
    const int64_t channels = static_cast<int64_t>(a.s.size());
    const bool transpose = conv->op_type() == "ConvTranspose";
    const int64_t group = conv->attr_int("group", 1);
    if (group < 1) return false;
    const int64_t cout = transpose ? dims[1] * group : dims[0];
    if (cout != channels || (transpose && dims[0] % group != 0)) return false;
    if (b && b->values.size() != static_cast<size_t>(cout)) return false;

    // Block (i, j) of W is the kernel between index i and index j of W's first two dims.
    const int64_t inner = w->tensor.numel() / (dims[0] * dims[1]);
    const int64_t rows_per_group = dims[0] / group;
    ir::Tensor w2t = fuse::scale_blocks(w->tensor, inner, [&](int64_t block) {
      const int64_t i = block / dims[1], j = block % dims[1];
      return a.s[transpose ? (i / rows_per_group) * dims[1] + j : i];
    });
    std::vector<double> bv(cout);
    for (int64_t c = 0; c < cout; ++c) bv[c] = (b ? b->values[c] : 0.0) * a.s[c] + a.t[c];
    ir::Value* w2 = g.add_initializer(conv->input(1)->name() + "_fused", std::move(w2t));
    ir::Value* b2 = g.add_initializer(bias_name(*conv, 2), make_float_tensor(a.dtype, {cout}, bv));
    fuse::replace_chain(g, conv->op_type(), "", {conv->input(0), w2, b2}, conv->attributes(),
                        bn->output(0), {conv, bn}, bn, removed);
    return true;
  }

  // Gemm: Y = alpha * A' B' + beta * C with output channel n = column of Y. Scaling column n of
  // B' by s[n] and replacing beta * C by (beta * C) * s + t (broadcast to [.., N]) gives BN(Y).
  // MatMul with a 2-D A is the same with alpha = 1 and no C.
  static bool into_gemm_before(ir::Graph& g, ir::Node* bn, const Affine& a,
                               std::unordered_set<const ir::Node*>& removed) {
    ir::Node* p = bn->input(0)->producer();
    if (p == nullptr || sole_reader(p->output(0)) != bn || p->num_outputs() != 1) return false;
    const bool gemm = is_onnx_op(*p, "Gemm");
    if (!gemm && !is_onnx_op(*p, "MatMul")) return false;
    if (g.opset("") < 7 || p->opset() < 7) return false;  // Gemm's unidirectional broadcast of C
    const int64_t n = static_cast<int64_t>(a.s.size());
    if (!gemm) {
      const ir::Shape& as = p->input(0)->shape();
      if (!as.has_rank() || as.rank() != 2) return false;
    }
    auto w = constant_weight(p->input(1), a.dtype, false);
    if (!w || w->tensor.rank() != 2) return false;
    const bool trans_b = gemm && p->attr_int("transB", 0) != 0;
    const auto& bd = w->tensor.dims();
    if ((trans_b ? bd[0] : bd[1]) != n) return false;

    // C' = (beta * C) * s + t over broadcast(C dims, [N]).
    const double beta = gemm ? p->attr_float("beta", 1.0f) : 0.0;
    std::vector<int64_t> cdims = {n};
    std::vector<double> cv;
    if (gemm && p->input(2) != nullptr) {
      auto c = constant_weight(p->input(2), a.dtype, true);
      if (!c || c->tensor.rank() > 2) return false;
      std::vector<int64_t> d = c->tensor.dims();
      if (d.empty()) d.push_back(1);  // (not `d = {1}`: GCC 12 -O3's bogus -Wfree-nonheap-object)
      if (d.back() != 1 && d.back() != n) return false;
      cdims = d;
      cdims.back() = n;
      int64_t rows = cdims.size() == 2 ? cdims[0] : 1;
      cv.resize(static_cast<size_t>(rows * n));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < n; ++j) {
          double x = c->values[static_cast<size_t>(r * d.back() + (d.back() == 1 ? 0 : j))];
          cv[r * n + j] = beta * x * a.s[j] + a.t[j];
        }
    } else {
      cv = a.t;
    }
    std::vector<onnx::AttributeProto> attrs;
    if (gemm)
      for (const auto& at : p->attributes())
        if (at.name() != "beta") attrs.push_back(at);
    // B' is [N, K] (a row per channel) or [K, N] (an element per channel in every row).
    ir::Tensor b2t =
        trans_b ? fuse::scale_blocks(w->tensor, bd[1], [&](int64_t row) { return a.s[row]; })
                : fuse::scale_blocks(w->tensor, 1, [&](int64_t e) { return a.s[e % n]; });
    ir::Value* b2 = g.add_initializer(p->input(1)->name() + "_fused", std::move(b2t));
    ir::Value* c2 =
        g.add_initializer(gemm && p->input(2) != nullptr ? bias_name(*p, 2) : bias_name(*p, 3),
                          make_float_tensor(a.dtype, cdims, cv));
    fuse::replace_chain(g, "Gemm", "", {p->input(0), b2, c2}, attrs, bn->output(0), {p, bn}, bn,
                        removed);
    return true;
  }

  // Conv(x * s + t) = Conv_W'(x) + b' with W'[o, i, k] = W[o, i, k] * s[ci(o, i)] and
  // b'[o] = b[o] + sum_{i,k} W[o, i, k] * t[ci(o, i)], exact only when no padding is read (a pad
  // would be 0 where BN would have given t).
  static bool into_conv_after(ir::Graph& g, ir::Node* bn, const Affine& a,
                              std::unordered_set<const ir::Node*>& removed) {
    ir::Node* conv = sole_reader(bn->output(0));
    if (conv == nullptr || !is_onnx_op(*conv, "Conv") || conv->input(0) != bn->output(0))
      return false;
    std::string auto_pad = conv->attr_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
    if (auto_pad == "NOTSET")
      for (int64_t pad : conv->attr_ints("pads"))
        if (pad != 0) return false;
    auto w = constant_weight(conv->input(1), a.dtype, false);
    if (!w || w->tensor.rank() < 3) return false;
    std::optional<Weight> b;
    if (conv->input(2) != nullptr) {
      b = constant_weight(conv->input(2), a.dtype, true);
      if (!b) return false;
    }
    const auto& dims = w->tensor.dims();
    const int64_t group = conv->attr_int("group", 1);
    const int64_t cout = dims[0], cin_g = dims[1];
    if (group < 1 || cout % group != 0 || cin_g * group != static_cast<int64_t>(a.s.size()))
      return false;
    if (b && b->values.size() != static_cast<size_t>(cout)) return false;
    // Block (o, i) of W is the kernel from input channel channel(block) to output channel o.
    const int64_t inner = w->tensor.numel() / (cout * cin_g);
    auto channel = [&](int64_t block) {
      const int64_t o = block / cin_g, i = block % cin_g;
      return (o / (cout / group)) * cin_g + i;
    };
    const std::vector<double> sums = fuse::block_sums(w->tensor, inner);
    std::vector<double> bv(cout);
    for (int64_t o = 0; o < cout; ++o) {
      double acc = b ? b->values[o] : 0.0;
      for (int64_t i = 0; i < cin_g; ++i) acc += sums[o * cin_g + i] * a.t[channel(o * cin_g + i)];
      bv[o] = acc;
    }
    ir::Value* w2 = g.add_initializer(
        conv->input(1)->name() + "_fused",
        fuse::scale_blocks(w->tensor, inner, [&](int64_t block) { return a.s[channel(block)]; }));
    ir::Value* b2 = g.add_initializer(bias_name(*conv, 2), make_float_tensor(a.dtype, {cout}, bv));
    fuse::replace_chain(g, "Conv", "", {bn->input(0), w2, b2}, conv->attributes(), conv->output(0),
                        {conv, bn}, conv, removed);
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseConvBn,
                   "folds inference BatchNormalization into the weights of a preceding Conv, "
                   "ConvTranspose, Gemm or MatMul (constant weights), or of a following Conv "
                   "without padding",
                   {{"fuse", 10}});

}  // namespace xopt::passes
