// MatMul(op(a), op(b)) scaled by constant scalars, op a Transpose swapping the last two dims
// and the scales Mul/Div on either input or on the result  ==>
// com.microsoft.FusedMatMul(a, b) <alpha = product of the scales, transA, transB>.
//
// onnxruntime fuses the same chains (MatMulScaleFusion, MatmulTransposeFusion); its CPU kernel
// takes float only. A FusedMatMul root (from an earlier run) takes further scales and transposes
// too, unless it moves batch dims (transBatchA/B). Runs after fuse-attention, whose Q.K^T / sqrt(d)
// patterns are exactly such chains, and after fuse-transpose and fuse-matmul-add, which turn the
// 2-D cases into standard Gemm. Every absorbed node must be read only by the chain, so the node
// count falls with every rewrite.
#include <cmath>
#include <numeric>
#include <optional>
#include <unordered_set>
#include <vector>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using fuse::sole_reader;

// True when `t` is a Transpose exchanging the last two dims of its input (rank >= 2) and keeping
// the others in place.
bool swaps_last_two(const ir::Node& t) {
  if (!is_onnx_op(t, "Transpose")) return false;
  const ir::Shape& s = t.input(0)->shape();
  if (!s.has_rank() || s.rank() < 2) return false;
  std::vector<int64_t> want(s.rank());
  std::iota(want.begin(), want.end(), 0);
  std::swap(want[want.size() - 1], want[want.size() - 2]);
  if (!t.has_attr("perm")) return s.rank() == 2;  // the default reverses the dims
  return t.attr_ints("perm") == want;
}

// For Mul(v, s) or Div(v, s) with `v` one operand and `s` a constant scalar that broadcasts
// nothing new: the factor the node multiplies `v` by.
std::optional<double> scale_of(const ir::Node& n, const ir::Value* v) {
  if (n.num_inputs() != 2 || n.num_outputs() != 1 || !(n.output(0)->shape() == v->shape()))
    return std::nullopt;
  if (is_onnx_op(n, "Div") && n.input(0) == v && n.input(1) != v) {
    auto s = xfmr::scalar_constant(n.input(1));
    if (!s || *s == 0.0 || !std::isfinite(1.0 / *s)) return std::nullopt;
    return 1.0 / *s;
  }
  if (!is_onnx_op(n, "Mul")) return std::nullopt;
  ir::Value* other = xfmr::other_input(&n, v);
  auto s = other == nullptr ? std::nullopt : xfmr::scalar_constant(other);
  if (!s || !std::isfinite(*s)) return std::nullopt;
  return s;
}

class FuseMatMulScale final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-matmul-scale";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* mm, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    const bool fused = mm->op_type() == "FusedMatMul" && mm->domain() == "com.microsoft";
    if (!fused && !is_onnx_op(*mm, "MatMul")) return false;
    if (mm->num_inputs() != 2 || mm->output(0)->dtype() != ir::DType::kFloat) return false;
    if (fused && (mm->attr_int("transBatchA", 0) != 0 || mm->attr_int("transBatchB", 0) != 0))
      return false;
    double alpha = fused ? mm->attr_float("alpha", 1.0f) : 1.0;
    bool trans[2] = {fused && mm->attr_int("transA", 0) != 0,
                     fused && mm->attr_int("transB", 0) != 0};
    std::vector<ir::Node*> chain{mm};
    ir::Value* operand[2] = {mm->input(0), mm->input(1)};
    int transposes = 0, scales = 0;
    for (int i = 0; i < 2; ++i) {
      // Walk up from the MatMul through scales and transposes read only by the chain.
      ir::Node* reader = mm;
      ir::Value* v = operand[i];
      while (v != nullptr && v->producer() != nullptr && sole_reader(v) == reader) {
        ir::Node* p = v->producer();
        ir::Value* next = nullptr;
        if (swaps_last_two(*p)) {
          trans[i] = !trans[i];
          ++transposes;
          next = p->input(0);
        } else {
          for (ir::Value* in : p->inputs()) {
            auto s = in == nullptr ? std::nullopt : scale_of(*p, in);
            if (!s) continue;
            alpha *= *s;
            ++scales;
            next = in;
            break;
          }
          if (next == nullptr) break;
        }
        chain.push_back(p);
        operand[i] = next;
        reader = p;
        v = next;
      }
    }
    // Scales of the result.
    ir::Value* out = mm->output(0);
    for (ir::Node* r = sole_reader(out); r != nullptr; r = sole_reader(out)) {
      auto s = scale_of(*r, out);
      if (!s) break;
      alpha *= *s;
      ++scales;
      chain.push_back(r);
      out = r->output(0);
    }
    if (chain.size() == 1) return false;
    for (ir::Value* v : operand)
      if (!v->shape().has_rank() || v->shape().rank() < 2) return false;
    std::vector<onnx::AttributeProto> attrs(3);
    attrs[0].set_name("alpha");
    attrs[0].set_type(onnx::AttributeProto::FLOAT);
    attrs[0].set_f(static_cast<float>(alpha));
    for (int i = 0; i < 2; ++i) {
      attrs[1 + i].set_name(i == 0 ? "transA" : "transB");
      attrs[1 + i].set_type(onnx::AttributeProto::INT);
      attrs[1 + i].set_i(trans[i] ? 1 : 0);
    }
    g.require_opset("com.microsoft", 1);
    fuse::replace_chain(g, "FusedMatMul", "com.microsoft", {operand[0], operand[1]}, attrs, out,
                        chain, mm, removed);
    if (transposes > 0) ctx.count("transpose");
    if (scales > 0) ctx.count("scale");
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseMatMulScale,
                   "fuses MatMul with constant scalar scales and last-two-dims Transposes of its "
                   "inputs into com.microsoft.FusedMatMul",
                   {{"fuse", 45}});

}  // namespace xopt::passes
