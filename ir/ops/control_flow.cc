// Control flow: If, Loop, Scan. Output types come from inferring the subgraphs themselves, with
// their inputs typed from the node's inputs where the subgraph leaves them untyped and their
// outer-scope reads typed from the enclosing graph.
#include "ir/ops/op_helpers.h"
#include "ir/ops/subgraph_infer.h"
#include "ir/shape_inference.h"
#include "ir/subgraph.h"

namespace xopt::ir::ops {
namespace {

// Two shapes one output may take (If's branches, a loop-carried value before and after the body).
Shape join(const Shape& a, const Shape& b) {
  if (!a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return Shape();
  std::vector<Dim> dims;
  for (size_t i = 0; i < a.rank(); ++i) dims.push_back(a[i] == b[i] ? a[i] : Dim());
  return Shape(dims);
}

Status infer_if(InferenceContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("cond is missing");
  // A condition known here (a constant, or shape arithmetic: "is the input 2-D?") picks the branch
  // that runs; the other may not even fit these shapes (ONNX's affine_grid expansion).
  const auto c = ctx.input_ints(0);
  const int taken = c && c->size() == 1 ? ((*c)[0] != 0 ? 0 : 1) : -1;
  std::vector<std::vector<std::pair<DType, Shape>>> branches(2);
  std::vector<std::optional<onnx::TypeProto>> nontensor(ctx.num_outputs());
  std::vector<Status> errors;
  int failed = -1;
  const char* names[] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    auto& types = branches[static_cast<size_t>(b)];
    types.assign(ctx.num_outputs(), {DType::kUndefined, Shape()});
    if (taken >= 0 && b != taken) continue;
    auto sg = infer_subgraph(ctx, names[b], {});
    if (!sg.is_ok()) {
      // Unknown which branch runs: one that does not fit these shapes may be the one never taken.
      if (taken >= 0 || !errors.empty()) return sg.status();
      errors.push_back(sg.status());
      failed = b;
      continue;
    }
    const auto& outs = sg->model.graph->outputs();
    if (outs.size() != ctx.num_outputs())
      return ctx.error(std::string(names[b]) + " has " + std::to_string(outs.size()) +
                       " outputs but the node has " + std::to_string(ctx.num_outputs()));
    for (size_t i = 0; i < outs.size(); ++i) {
      types[i] = {outs[i]->dtype(), outs[i]->shape()};
      if (!outs[i]->is_tensor() && (!nontensor[i] || taken == b)) nontensor[i] = outs[i]->type();
    }
    // The branch that runs hands its shape arithmetic on (N, C, H, W split from a size input).
    if (taken == b)
      for (size_t i = 0; i < outs.size(); ++i)
        if (outs[i]->shape_data()) {
          SymData data;
          for (const Dim& d : *outs[i]->shape_data()) data.push_back(SymInt::from_dim(d));
          ctx.set_output_data(i, std::move(data));
        }
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (nontensor[i]) {  // a sequence or optional: the type of the branch that says most
      ctx.set_output_type(i, *nontensor[i]);
      continue;
    }
    const auto& [t0, s0] = branches[0][i];
    const auto& [t1, s1] = branches[1][i];
    if (t0 != DType::kUndefined && t1 != DType::kUndefined && t0 != t1)
      return ctx.error("output " + std::to_string(i) + " is " + std::string(dtype_name(t0)) +
                       " in then_branch but " + std::string(dtype_name(t1)) + " in else_branch");
    const DType t = t0 != DType::kUndefined ? t0 : t1;
    if (taken >= 0)
      ctx.set_output(i, t, taken == 0 ? s0 : s1);
    else if (errors.empty())
      ctx.set_output(i, t, join(s0, s1));
    else  // only the branch that fits these shapes can run in a valid model
      ctx.set_output(i, t, failed == 0 ? s1 : s0);
  }
  return Status::ok();
}

Status infer_loop(InferenceContext& ctx) {
  const size_t n_carried = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  std::vector<std::pair<DType, Shape>> ins = {{DType::kInt64, Shape::scalar()},
                                              {DType::kBool, Shape::scalar()}};
  std::vector<const Value*> values = {nullptr, nullptr};
  for (size_t k = 0; k < n_carried; ++k) {
    if (!ctx.has_input(2 + k))
      return ctx.error("loop-carried input " + std::to_string(k) + " is missing");
    ins.emplace_back(ctx.input_dtype(2 + k), ctx.input_shape(2 + k));
    values.push_back(ctx.input(2 + k));
  }
  auto sg = infer_subgraph(ctx, "body", ins, values);
  if (!sg.is_ok()) return sg.status();
  const auto& outs = sg->model.graph->outputs();
  if (outs.size() < 1 + n_carried)
    return ctx.error("body has " + std::to_string(outs.size()) + " outputs; expected at least " +
                     std::to_string(1 + n_carried));
  if (ctx.num_outputs() > outs.size() - 1)
    return ctx.error("the node has " + std::to_string(ctx.num_outputs()) +
                     " outputs but body makes " + std::to_string(outs.size() - 1));
  for (size_t k = 0; k < n_carried; ++k) {
    if (!ctx.input(2 + k)->is_tensor() || !outs[1 + k]->is_tensor()) {
      // A sequence or optional: what the body makes (Loop 16 lets an optional(seq) carried in
      // come out as the seq), or what went in when the body leaves it untyped.
      ctx.set_output_type(
          k, outs[1 + k]->is_tensor() ? ctx.input(2 + k)->type() : outs[1 + k]->type());
      continue;
    }
    ctx.set_output(k, ctx.input_dtype(2 + k), join(ctx.input_shape(2 + k), outs[1 + k]->shape()));
  }
  // The trip count is known when M is a constant and the loop cannot stop early: no cond, or a
  // body that passes its cond through unchanged (as exporters write a for loop).
  Dim trips;
  const auto m = ctx.has_input(0) ? ctx.input_ints(0) : std::nullopt;
  if (m && m->size() == 1 && (*m)[0] >= 0) {
    const Value* cout = outs[0];
    const Graph& body = *sg->model.graph;
    const bool passthrough = cout == body.inputs()[1] ||
                             (cout->producer() != nullptr && cout->producer()->is("Identity") &&
                              cout->producer()->input(0) == body.inputs()[1]);
    const auto c = ctx.has_input(1) ? ctx.input_ints(1) : std::nullopt;
    if (passthrough && (!ctx.has_input(1) || (c && c->size() == 1 && (*c)[0] != 0)))
      trips = Dim((*m)[0]);
  }
  for (size_t k = n_carried; k + 1 < outs.size(); ++k) {
    const Value* v = outs[1 + k];
    Shape s;
    if (v->shape().has_rank()) {
      std::vector<Dim> dims = {trips};
      for (const Dim& d : v->shape().dims()) dims.push_back(d);
      s = Shape(dims);
    }
    ctx.set_output(k, v->dtype(), s);
  }
  return Status::ok();
}

// Scan 8 (batch_axis = true: input 0 is sequence_lens, [batch, seq, ...] scan inputs) and 9+.
template <bool kBatched>
Status infer_scan(InferenceContext& ctx) {
  const size_t first = kBatched ? 1 : 0;
  const size_t n_inputs = ctx.num_inputs() < first ? 0 : ctx.num_inputs() - first;
  const int64_t m = ctx.node().attr_int("num_scan_inputs", -1);
  if (m < 1 || static_cast<size_t>(m) > n_inputs)
    return ctx.error("num_scan_inputs is " + std::to_string(m) + " with " +
                     std::to_string(n_inputs) + " state and scan inputs");
  const size_t n_scan = static_cast<size_t>(m), n_states = n_inputs - n_scan;
  std::vector<int64_t> in_axes = ctx.node().attr_ints("scan_input_axes");
  if (in_axes.empty()) in_axes.assign(n_scan, 0);
  if (in_axes.size() != n_scan) return ctx.error("scan_input_axes does not match num_scan_inputs");
  if (kBatched) in_axes.assign(n_scan, 1);
  std::vector<std::pair<DType, Shape>> ins;
  Dim len;
  bool len_known = false;
  for (size_t i = 0; i < n_inputs; ++i) {
    if (!ctx.has_input(first + i))
      return ctx.error("input " + std::to_string(first + i) + " is missing");
    Shape s = ctx.input_shape(first + i);
    if (kBatched && s.has_rank()) {
      if (s.rank() < 1)
        return ctx.error("input " + std::to_string(first + i) + " has no batch axis");
      s.mutable_dims().erase(s.mutable_dims().begin());
    }
    if (i >= n_states && s.has_rank()) {
      const size_t j = i - n_states;
      const auto r = static_cast<int64_t>(s.rank()) + (kBatched ? 1 : 0);
      int64_t a = in_axes[j] < 0 ? in_axes[j] + r : in_axes[j];
      if (kBatched) a = 0;
      if (a < 0 || a >= static_cast<int64_t>(s.rank()))
        return ctx.error("scan_input_axes[" + std::to_string(j) + "] is out of range for " +
                         str(ctx.input_shape(first + i)));
      if (!len_known) {
        len = s[static_cast<size_t>(a)];
        len_known = true;
      }
      s.mutable_dims().erase(s.mutable_dims().begin() + a);
    }
    ins.emplace_back(ctx.input_dtype(first + i), s);
  }
  auto sg = infer_subgraph(ctx, "body", ins);
  if (!sg.is_ok()) return sg.status();
  const auto& outs = sg->model.graph->outputs();
  if (outs.size() < n_states)
    return ctx.error("body has fewer outputs than the " + std::to_string(n_states) + " states");
  if (ctx.num_outputs() > outs.size())
    return ctx.error("the node has " + std::to_string(ctx.num_outputs()) +
                     " outputs but body makes " + std::to_string(outs.size()));
  std::vector<int64_t> out_axes = ctx.node().attr_ints("scan_output_axes");
  if (out_axes.empty()) out_axes.assign(outs.size() - n_states, 0);
  if (out_axes.size() != outs.size() - n_states)
    return ctx.error("scan_output_axes does not match the body's scan outputs");
  const Dim batch =
      kBatched && ctx.input_shape(first).has_rank() && ctx.input_shape(first).rank() > 0
          ? ctx.input_shape(first)[0]
          : Dim();
  for (size_t k = 0; k < n_states; ++k) {
    Shape s = ctx.input_shape(first + k);
    ctx.set_output(k, ctx.input_dtype(first + k), s);
  }
  for (size_t k = n_states; k < outs.size(); ++k) {
    const Value* v = outs[k];
    Shape s;
    if (v->shape().has_rank()) {
      std::vector<Dim> dims = v->shape().dims();
      const auto r = static_cast<int64_t>(dims.size()) + 1;
      int64_t a = out_axes[k - n_states] < 0 ? out_axes[k - n_states] + r : out_axes[k - n_states];
      if (kBatched) a = 0;
      if (a < 0 || a >= r) return ctx.error("scan_output_axes is out of range");
      dims.insert(dims.begin() + a, len_known ? len : Dim());
      if (kBatched) dims.insert(dims.begin(), batch);
      s = Shape(dims);
    }
    ctx.set_output(k, v->dtype(), s);
  }
  return Status::ok();
}

}  // namespace

void register_control_flow_ops(OpList& ops) {
  ops.push_back(make_op("If", 1, kMaxOpset, infer_if));
  ops.push_back(make_op("Loop", 1, kMaxOpset, infer_loop));
  ops.push_back(make_op("Scan", 8, 8, infer_scan<true>));
  ops.push_back(make_op("Scan", 9, kMaxOpset, infer_scan<false>));
}

}  // namespace xopt::ir::ops
