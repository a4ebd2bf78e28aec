// onnxruntime's dynamic quantization of a MatMul, as quantize_dynamic writes it:
//
//   q, s, z = DynamicQuantizeLinear(x)
//   y = Mul(Cast<to = FLOAT>(MatMulInteger(q, W, z, W_zero_point)), Mul(s, W_scale)) [+ bias]
//
//   ==>  y = com.microsoft.DynamicQuantizeMatMul(x, W, W_scale, W_zero_point, bias)
//
// the fusion onnxruntime's extended optimizer makes (DynamicQuantizeMatMulFusion). It computes
// the same float operations in the same order: x quantized by DynamicQuantizeLinear's rule, the
// exact integer product, float(acc) * (s * W_scale[n]), then + bias[n]; so the fused model gives
// the unfused one's values bit for bit (our kernel and onnxruntime's alike). W and W_scale are
// constants (W_scale a scalar or one value per column), bias a 1-D constant of one value per
// column, and every intermediate value has no other reader.
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

// The number of columns of a constant 2-D B, or 0.
int64_t columns_of(const ir::Value* w) {
  if (w == nullptr || !w->is_initializer() || w->initializer()->rank() != 2) return 0;
  return w->initializer()->dims()[1];
}

// A float constant holding one value, or `columns` values along one dim.
bool per_tensor_or_column(const ir::Value* v, int64_t columns, ir::DType dtype) {
  if (v == nullptr || !v->is_initializer() || v->dtype() != dtype) return false;
  const ir::Tensor& t = *v->initializer();
  return t.numel() == 1 || (t.rank() == 1 && t.dims()[0] == columns);
}

class FuseDynamicQuantizeMatMul final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-dynamic-quantize-matmul";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* mmi, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    if (!is_onnx_op(*mmi, "MatMulInteger") || mmi->num_inputs() < 3) return false;
    ir::Value* q = mmi->input(0);
    ir::Node* dql = q == nullptr ? nullptr : q->producer();
    if (dql == nullptr || !is_onnx_op(*dql, "DynamicQuantizeLinear") || dql->num_outputs() != 3)
      return false;
    ir::Value* x = dql->input(0);
    ir::Value* s = dql->output(1);
    ir::Value* z = dql->output(2);
    if (x == nullptr || x->dtype() != ir::DType::kFloat || s == nullptr || z == nullptr ||
        mmi->input(2) != z || sole_reader(q) != mmi || sole_reader(z) != mmi)
      return false;
    ir::Value* w = mmi->input(1);
    const int64_t n = columns_of(w);
    ir::Value* w_zp = mmi->num_inputs() > 3 ? mmi->input(3) : nullptr;
    if (n == 0 || (w_zp != nullptr && !per_tensor_or_column(w_zp, n, w->dtype()))) return false;
    ir::Node* cast = sole_reader(mmi->output(0));
    if (cast == nullptr || !is_onnx_op(*cast, "Cast") ||
        cast->attr_int("to", 0) != onnx::TensorProto::FLOAT)
      return false;
    ir::Node* mul = sole_reader(cast->output(0));
    if (mul == nullptr || !is_onnx_op(*mul, "Mul") || mul->num_inputs() != 2) return false;
    ir::Value* scales = xfmr::other_input(mul, cast->output(0));
    ir::Node* scale_mul = scales == nullptr ? nullptr : scales->producer();
    if (scale_mul == nullptr || !is_onnx_op(*scale_mul, "Mul") || sole_reader(scales) != mul ||
        sole_reader(s) != scale_mul)
      return false;
    ir::Value* w_scale = xfmr::other_input(scale_mul, s);
    if (!per_tensor_or_column(w_scale, n, ir::DType::kFloat)) return false;
    // The Mul broadcasts nothing onto the product: its result has the product's shape.
    if (!(mul->output(0)->shape() == mmi->output(0)->shape())) return false;
    std::vector<ir::Node*> chain = {mmi, dql, cast, scale_mul, mul};
    ir::Value* result = mul->output(0);
    ir::Value* bias = nullptr;
    if (ir::Node* add = sole_reader(result);
        add != nullptr && is_onnx_op(*add, "Add") && add->num_inputs() == 2) {
      ir::Value* b = xfmr::other_input(add, result);
      if (b != nullptr && b->is_initializer() && b->dtype() == ir::DType::kFloat &&
          b->initializer()->rank() == 1 && b->initializer()->dims()[0] == n &&
          add->output(0)->shape() == result->shape()) {
        bias = b;
        chain.push_back(add);
        result = add->output(0);
      }
    }
    std::vector<ir::Value*> inputs = {x, w, w_scale, w_zp, bias};
    while (inputs.back() == nullptr) inputs.pop_back();
    g.require_opset("com.microsoft", 1);
    fuse::replace_chain(g, "DynamicQuantizeMatMul", "com.microsoft", inputs, {}, result, chain,
                        chain.back(), removed);
    if (bias != nullptr) ctx.count("with bias");
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseDynamicQuantizeMatMul,
                   "fuses DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by the scales "
                   "[-> Add bias] into com.microsoft.DynamicQuantizeMatMul (bit-exact)",
                   {{"fuse", 2}});

}  // namespace xopt::passes
