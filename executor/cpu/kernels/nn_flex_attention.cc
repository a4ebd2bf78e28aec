// FlexAttention (ai.onnx.preview 1; ir/ops/flex_attention.h), in the order of the op's function
// body, rounding where it rounds: Q and K are each multiplied by sqrt(scale) in their type T (the
// scale, 1/sqrt(head size) by default, computed in float32); scores = Q K^T rounded to T, then to
// the softmax precision P; score_mod; softmax over the keys in P (an all -inf row gives NaN, as
// Softmax does); prob_mod; Y = probs V in P (V cast to P), rounded to T. Grouped queries: query
// head h reads kv head h / (Hq / Hkv). The modifiers run once each on the whole [B, Hq, L, S]
// tensor, in simple mode (executor/cpu/subgraph_run.h).
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"
#include "executor/cpu/subgraph_run.h"
#include "ir/ops/flex_attention.h"

namespace xopt::exec::ops {
namespace {

// Runs the modifier `attr` (when the node has it) on `x` [B, Hq, L, S] of type `p` in place.
Status modify(KernelContext& ctx, const char* attr, ir::DType p, const std::vector<int64_t>& dims,
              std::vector<double>& x) {
  if (!ctx.node().has_attr(attr)) return Status::ok();
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg,
                        ir::load_subgraph(ctx.node(), attr, subgraph_exec_options()));
  if (sg.num_formal_inputs != 1 || sg.model.graph->outputs().size() != 1)
    return ctx.error(std::string(attr) + " must have one input and one output");
  ir::Tensor in(p, dims);
  XOPT_RETURN_IF_ERROR(store(x, &in));
  std::map<std::string, ExecValue> ins;
  ins[sg.model.graph->inputs()[0]->name()] = ExecValue::of_tensor(std::move(in));
  XOPT_RETURN_IF_ERROR(add_outer_values(ctx, sg, ins));
  XOPT_ASSIGN_OR_RETURN(std::vector<ExecValue> outs, run_body_values(ctx, sg, ins));
  if (outs.size() != 1 || !outs[0].is_tensor())
    return ctx.error(std::string(attr) + " must give one tensor");
  const ir::Tensor& out = outs[0].tensor();
  if (out.dtype() != p || out.dims() != dims)
    return ctx.error(std::string(attr) + " gave " + std::string(ir::dtype_name(out.dtype())) +
                     ir::dims_string(out.dims()) + "; it must keep " +
                     std::string(ir::dtype_name(p)) + ir::dims_string(dims));
  x = doubles(out);
  return Status::ok();
}

Status flex_attention(KernelContext& ctx) {
  const ir::Tensor* q = ctx.input(0);
  const ir::Tensor* k = ctx.input(1);
  const ir::Tensor* v = ctx.input(2);
  if (q == nullptr || k == nullptr || v == nullptr) return ctx.error("Q, K and V are required");
  const ir::DType t = q->dtype();
  if (k->dtype() != t || v->dtype() != t) return ctx.error("Q, K and V differ in type");
  if (q->rank() != 4 || k->rank() != 4 || v->rank() != 4)
    return ctx.error("Q, K and V must be 4-D, got " + ir::dims_string(q->dims()) + ", " +
                     ir::dims_string(k->dims()) + ", " + ir::dims_string(v->dims()));
  const int64_t b = q->dims()[0], hq = q->dims()[1], l = q->dims()[2], e = q->dims()[3];
  const int64_t hkv = k->dims()[1], s = k->dims()[2], ev = v->dims()[3];
  if (k->dims()[0] != b || v->dims()[0] != b) return ctx.error("batch sizes differ");
  if (k->dims()[3] != e) return ctx.error("Q and K head sizes differ");
  if (v->dims()[1] != hkv || v->dims()[2] != s) return ctx.error("K and V shapes disagree");
  if (hkv <= 0 || hq % hkv != 0)
    return ctx.error("q heads " + std::to_string(hq) + " are not a multiple of kv heads " +
                     std::to_string(hkv));
  XOPT_ASSIGN_OR_RETURN(ir::DType p, ir::ops::flex_softmax_dtype(ctx.node(), t));
  const float scale = ctx.node().has_attr("scale") ? ctx.node().attr_float("scale", 1.0F)
                                                   : 1.0F / std::sqrt(static_cast<float>(e));
  const double root = round_to(t, static_cast<double>(std::sqrt(scale)));

  std::vector<double> qd = doubles(*q), kd = doubles(*k), vd = doubles(*v);
  for (double& x : qd) x = round_to(t, x * root);
  for (double& x : kd) x = round_to(t, x * root);
  if (p != t) round_all(p, vd);
  const int64_t group = hq / hkv;
  const std::vector<int64_t> sdims = {b, hq, l, s};
  std::vector<double> scores(static_cast<size_t>(b * hq * l * s));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kv = bi * hkv + h / group;
      for (int64_t i = 0; i < l; ++i)
        for (int64_t j = 0; j < s; ++j) {
          double acc = 0.0;
          for (int64_t c = 0; c < e; ++c)
            acc += qd[static_cast<size_t>(((bi * hq + h) * l + i) * e + c)] *
                   kd[static_cast<size_t>((kv * s + j) * e + c)];
          scores[static_cast<size_t>(((bi * hq + h) * l + i) * s + j)] =
              round_to(p, round_to(t, acc));
        }
    }
  XOPT_RETURN_IF_ERROR(modify(ctx, "score_mod", p, sdims, scores));
  for (int64_t r = 0; r < b * hq * l; ++r) {
    double* row = scores.data() + r * s;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < s; ++j) mx = std::max(mx, row[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < s; ++j) sum += (row[j] = std::exp(row[j] - mx));
    for (int64_t j = 0; j < s; ++j) row[j] = round_to(p, row[j] / sum);
  }
  XOPT_RETURN_IF_ERROR(modify(ctx, "prob_mod", p, sdims, scores));
  std::vector<double> y(static_cast<size_t>(b * hq * l * ev));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kv = bi * hkv + h / group;
      for (int64_t i = 0; i < l; ++i)
        for (int64_t c = 0; c < ev; ++c) {
          double acc = 0.0;
          for (int64_t j = 0; j < s; ++j)
            acc += scores[static_cast<size_t>(((bi * hq + h) * l + i) * s + j)] *
                   vd[static_cast<size_t>((kv * s + j) * ev + c)];
          y[static_cast<size_t>(((bi * hq + h) * l + i) * ev + c)] = round_to(t, round_to(p, acc));
        }
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, t, {b, hq, l, ev}));
  return store(y, yt);
}

}  // namespace

XOPT_CPU_KERNEL("ai.onnx.preview", "FlexAttention", 1, kLatest, flex_attention);

}  // namespace xopt::exec::ops
