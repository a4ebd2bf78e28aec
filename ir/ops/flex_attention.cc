#include "ir/ops/flex_attention.h"

#include <array>
#include <string>

#include "ir/ops/op_helpers.h"
#include "ir/ops/subgraph_infer.h"

namespace xopt::ir::ops {

Result<DType> flex_softmax_dtype(const Node& node, DType input) {
  if (!node.has_attr("softmax_precision"))
    return input == DType::kDouble ? DType::kDouble : DType::kFloat;
  const int64_t code = node.attr_int("softmax_precision", 0);
  const auto d = static_cast<DType>(code);
  if (d != DType::kFloat && d != DType::kDouble && d != DType::kFloat16 && d != DType::kBFloat16)
    return invalid_model(node.describe() + ": softmax_precision " + std::to_string(code) +
                         " is not float, float16, bfloat16 or double");
  return d;
}

Status infer_flex_attention(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  const DType t = ctx.input_dtype(0);
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input_dtype(i) != DType::kUndefined && t != DType::kUndefined &&
        ctx.input_dtype(i) != t)
      return ctx.error("Q, K and V differ in element type");
  XOPT_ASSIGN_OR_RETURN(DType sp, flex_softmax_dtype(ctx.node(), t));
  const std::array<const Shape*, 3> in = {&ctx.input_shape(0), &ctx.input_shape(1),
                                          &ctx.input_shape(2)};
  for (const Shape* s : in)
    if (s->has_rank() && s->rank() != 4)
      return ctx.error("Q, K and V must be 4-D, got " + str(*in[0]) + ", " + str(*in[1]) + ", " +
                       str(*in[2]));
  const Shape& q = *in[0];
  const Shape& k = *in[1];
  const Shape& v = *in[2];
  auto dim = [](const Shape& s, size_t i) { return s.has_rank() ? s[i] : Dim(); };
  auto same = [](const Dim& a, const Dim& b) {
    return !a.is_known() || !b.is_known() || a.value == b.value;
  };
  if (!same(dim(q, 3), dim(k, 3)))
    return ctx.error("Q and K head sizes differ: " + str(q) + ", " + str(k));
  if (!same(dim(k, 2), dim(v, 2)) || !same(dim(k, 1), dim(v, 1)))
    return ctx.error("K and V disagree: " + str(k) + ", " + str(v));
  const Dim hq = dim(q, 1), hkv = dim(k, 1);
  if (hq.is_known() && hkv.is_known() && (hkv.value <= 0 || hq.value % hkv.value != 0))
    return ctx.error("q heads " + std::to_string(hq.value) + " are not a multiple of kv heads " +
                     std::to_string(hkv.value));
  const Shape scores({dim(q, 0), hq, dim(q, 2), dim(k, 2)});
  for (const char* attr : {"score_mod", "prob_mod"}) {
    if (!ctx.node().has_attr(attr)) continue;
    XOPT_ASSIGN_OR_RETURN(Subgraph sg, infer_subgraph(ctx, attr, {{sp, scores}}));
    const auto& outs = sg.model.graph->outputs();
    if (outs.size() != 1)
      return ctx.error(std::string(attr) + " has " + std::to_string(outs.size()) +
                       " outputs; it must have one");
    const Value* o = outs[0];
    if (o->dtype() != DType::kUndefined && o->dtype() != sp)
      return ctx.error(std::string(attr) + " gives " + std::string(dtype_name(o->dtype())) +
                       "; it must keep " + std::string(dtype_name(sp)));
    bool keeps = !o->shape().has_rank() || o->shape().rank() == 4;
    for (size_t d = 0; keeps && o->shape().has_rank() && d < 4; ++d)
      keeps = same(o->shape()[d], scores[d]);
    if (!keeps)
      return ctx.error(std::string(attr) + " gives " + str(o->shape()) + "; it must keep " +
                       str(scores));
  }
  ctx.set_output(0, t, Shape({dim(q, 0), hq, dim(q, 2), dim(v, 3)}));
  return Status::ok();
}

}  // namespace xopt::ir::ops
