// Control flow: If, Loop, Scan. Each runs its subgraph with run_model(_values), in simple mode: the
// body's values live in their own buffers, outside any arena, and only the node's outputs land in
// the plan (see planner/README.md, "Control flow"). Outer-scope values reach the body as the extra
// inputs ir::load_subgraph declares for them.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/kernel.h"
#include "executor/cpu/parallel.h"
#include "executor/cpu/session.h"
#include "executor/cpu/subgraph_run.h"
#include "ir/op_registry.h"
#include "ir/subgraph.h"

namespace xopt::exec {
namespace {

using ir::Tensor;

// The outer-scope tensors the subgraph reads (Scan's bodies take tensors only).
Status add_outer(const KernelContext& ctx, const ir::Subgraph& sg,
                 std::map<std::string, Tensor>& ins) {
  std::map<std::string, ExecValue> values;
  XOPT_RETURN_IF_ERROR(add_outer_values(ctx, sg, values));
  for (auto& [name, v] : values) {
    if (!v.is_tensor())
      return ctx.unsupported("the subgraph reads outer-scope value '" + name + "', a " +
                             v.describe() + ", where a tensor is expected");
    ins[name] = v.tensor();
  }
  return Status::ok();
}

Result<std::vector<Tensor>> run_body(const KernelContext& ctx, const ir::Subgraph& sg,
                                     const std::map<std::string, Tensor>& ins) {
  RunOptions ro;
  ro.threads = intra_op_threads();
  auto outs = run_model(sg.model, ins, ro);
  if (!outs.is_ok())
    return outs.status().with_context(ctx.node().describe() + ": in subgraph '" +
                                      sg.model.graph->shell().name() + "': ");
  return outs;
}

Status check_plain(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() == ir::DType::kString)
    return ctx.unsupported(std::string(what) + " of strings is not supported");
  return Status::ok();
}

// Element `i` along `axis` of `t`, with that axis removed.
Tensor slice_axis(const Tensor& t, size_t axis, int64_t i) {
  std::vector<int64_t> dims = t.dims();
  int64_t outer = 1, inner = static_cast<int64_t>(ir::dtype_size(t.dtype()));
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t n = dims[axis];
  dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
  Tensor out(t.dtype(), dims);
  const auto* src = static_cast<const std::byte*>(t.raw_data());
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  for (int64_t o = 0; o < outer && inner > 0; ++o)
    std::memcpy(dst + o * inner, src + (o * n + i) * inner, static_cast<size_t>(inner));
  return out;
}

// The tensors stacked along a new axis `axis`; `elem_dims` gives each one's dims (used when the
// list is empty).
Result<Tensor> stack_axis(const KernelContext& ctx, const std::vector<Tensor>& ts, size_t axis,
                          const std::vector<int64_t>& elem_dims, ir::DType dtype) {
  for (const Tensor& t : ts)
    if (t.dims() != elem_dims || t.dtype() != dtype)
      return ctx.error("a scan output changes shape or type between iterations (" +
                       ir::dims_string(elem_dims) + " then " + ir::dims_string(t.dims()) + ")");
  std::vector<int64_t> dims = elem_dims;
  const auto n = static_cast<int64_t>(ts.size());
  dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(axis), n);
  Tensor out(dtype, dims);
  int64_t outer = 1, inner = static_cast<int64_t>(ir::dtype_size(dtype));
  for (size_t d = 0; d < axis; ++d) outer *= elem_dims[d];
  for (size_t d = axis; d < elem_dims.size(); ++d) inner *= elem_dims[d];
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  for (int64_t k = 0; k < n && inner > 0; ++k) {
    const auto* src = static_cast<const std::byte*>(ts[static_cast<size_t>(k)].raw_data());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * n + k) * inner, src + o * inner, static_cast<size_t>(inner));
  }
  return out;
}

// Dims and type of a scan output when no iteration produced one: the body's declared output,
// which must then be static.
Result<std::pair<std::vector<int64_t>, ir::DType>> declared_elem(const KernelContext& ctx,
                                                                 const ir::Subgraph& sg,
                                                                 size_t body_output) {
  const ir::Value* v = sg.model.graph->outputs()[body_output];
  if (!v->shape().is_static() || v->dtype() == ir::DType::kUndefined)
    return ctx.unsupported(
        "no iteration ran and the body does not declare a static shape for "
        "scan output '" +
        v->name() + "'");
  return std::make_pair(v->shape().static_dims(), v->dtype());
}

Status if_kernel(KernelContext& ctx) {
  const Tensor* c = ctx.input(0);
  if (c == nullptr || c->numel() != 1) return ctx.error("cond must hold exactly one element");
  const bool cond = c->as_int64(0) != 0;
  XOPT_ASSIGN_OR_RETURN(
      ir::Subgraph sg,
      ir::load_subgraph(ctx.node(), cond ? "then_branch" : "else_branch", subgraph_exec_options()));
  std::map<std::string, ExecValue> ins;
  XOPT_RETURN_IF_ERROR(add_outer_values(ctx, sg, ins));
  XOPT_ASSIGN_OR_RETURN(std::vector<ExecValue> outs, run_body_values(ctx, sg, ins));
  if (outs.size() != ctx.num_outputs())
    return ctx.error(std::string(cond ? "then_branch" : "else_branch") + " has " +
                     std::to_string(outs.size()) + " outputs but the node has " +
                     std::to_string(ctx.num_outputs()));
  for (size_t i = 0; i < outs.size(); ++i)
    if (ctx.wants_output(i)) XOPT_RETURN_IF_ERROR(ctx.set_output_value(i, std::move(outs[i])));
  return Status::ok();
}

Status loop_kernel(KernelContext& ctx) {
  const Tensor* m = ctx.input(0);
  const Tensor* c = ctx.input(1);
  if (m != nullptr && m->numel() != 1) return ctx.error("M must hold exactly one element");
  if (c != nullptr && c->numel() != 1) return ctx.error("cond must hold exactly one element");
  const int64_t max_trip = m != nullptr ? m->as_int64(0) : std::numeric_limits<int64_t>::max();
  bool cond = c != nullptr ? c->as_int64(0) != 0 : true;
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg,
                        ir::load_subgraph(ctx.node(), "body", subgraph_exec_options()));
  const ir::Graph& body = *sg.model.graph;
  const size_t n_carried = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  if (sg.num_formal_inputs != 2 + n_carried)
    return ctx.error("the body has " + std::to_string(sg.num_formal_inputs) +
                     " inputs; expected 2 + " + std::to_string(n_carried) + " loop-carried");
  if (body.outputs().size() < 1 + n_carried)
    return ctx.error("the body has " + std::to_string(body.outputs().size()) +
                     " outputs; expected at least 1 + " + std::to_string(n_carried));
  const size_t n_scan = body.outputs().size() - 1 - n_carried;
  if (ctx.num_outputs() > n_carried + n_scan)
    return ctx.error("the node has " + std::to_string(ctx.num_outputs()) +
                     " outputs but the body makes " + std::to_string(n_carried + n_scan));

  // Loop-carried values may be sequences or optionals (a list built up over the iterations).
  std::map<std::string, ExecValue> ins;
  XOPT_RETURN_IF_ERROR(add_outer_values(ctx, sg, ins));
  std::vector<ExecValue> carried;
  for (size_t i = 0; i < n_carried; ++i) {
    std::optional<ExecValue> v = ctx.any_input(2 + i);
    if (!v) return ctx.error("loop-carried input " + std::to_string(i) + " is missing");
    carried.push_back(std::move(*v));
  }
  std::vector<std::vector<Tensor>> scans(n_scan);
  const std::string& iter_name = body.inputs()[0]->name();
  const std::string& cond_name = body.inputs()[1]->name();
  for (int64_t i = 0; i < max_trip && cond; ++i) {
    ins[iter_name] = ExecValue::of_tensor(Tensor::scalar<int64_t>(i));
    ins[cond_name] = ExecValue::of_tensor(Tensor::scalar<bool>(cond));
    for (size_t k = 0; k < n_carried; ++k) ins[body.inputs()[2 + k]->name()] = carried[k];
    XOPT_ASSIGN_OR_RETURN(std::vector<ExecValue> outs, run_body_values(ctx, sg, ins));
    if (!outs[0].is_tensor() || outs[0].tensor().numel() != 1)
      return ctx.error("the body's cond output is not a single element");
    cond = outs[0].tensor().as_int64(0) != 0;
    for (size_t k = 0; k < n_carried; ++k) carried[k] = std::move(outs[1 + k]);
    for (size_t k = 0; k < n_scan; ++k) {
      if (!outs[1 + n_carried + k].is_tensor())
        return ctx.unsupported("scan output " + std::to_string(k) + " is a " +
                               outs[1 + n_carried + k].describe() + ", not a tensor");
      XOPT_RETURN_IF_ERROR(check_plain(ctx, outs[1 + n_carried + k].tensor(), "a scan output"));
      scans[k].push_back(std::move(outs[1 + n_carried + k].mutable_tensor()));
    }
  }
  for (size_t k = 0; k < n_carried && k < ctx.num_outputs(); ++k)
    if (ctx.wants_output(k)) XOPT_RETURN_IF_ERROR(ctx.set_output_value(k, carried[k]));
  for (size_t k = 0; k < n_scan && n_carried + k < ctx.num_outputs(); ++k) {
    if (!ctx.wants_output(n_carried + k)) continue;
    std::vector<int64_t> elem;
    ir::DType dtype;
    if (scans[k].empty()) {
      XOPT_ASSIGN_OR_RETURN(auto d, declared_elem(ctx, sg, 1 + n_carried + k));
      std::tie(elem, dtype) = d;
    } else {
      elem = scans[k][0].dims();
      dtype = scans[k][0].dtype();
    }
    XOPT_ASSIGN_OR_RETURN(Tensor t, stack_axis(ctx, scans[k], 0, elem, dtype));
    XOPT_RETURN_IF_ERROR(ctx.forward(n_carried + k, t));
  }
  return Status::ok();
}

// One scan over `len` steps: states in and out, the M scan inputs sliced along their axes (reversed
// where the direction is 1), the K scan outputs per step collected in step order.
Status scan_steps(const KernelContext& ctx, const ir::Subgraph& sg,
                  std::map<std::string, Tensor>& ins, std::vector<Tensor>& states,
                  const std::vector<const Tensor*>& xs, const std::vector<size_t>& axes,
                  const std::vector<int64_t>& dirs, int64_t len,
                  std::vector<std::vector<Tensor>>& scans) {
  const ir::Graph& body = *sg.model.graph;
  const size_t n = states.size();
  for (int64_t t = 0; t < len; ++t) {
    for (size_t k = 0; k < n; ++k) ins[body.inputs()[k]->name()] = states[k];
    for (size_t j = 0; j < xs.size(); ++j) {
      const int64_t idx = dirs[j] == 1 ? len - 1 - t : t;
      ins[body.inputs()[n + j]->name()] = slice_axis(*xs[j], axes[j], idx);
    }
    XOPT_ASSIGN_OR_RETURN(std::vector<Tensor> outs, run_body(ctx, sg, ins));
    for (size_t k = 0; k < n; ++k) states[k] = std::move(outs[k]);
    for (size_t k = 0; k < scans.size(); ++k) {
      XOPT_RETURN_IF_ERROR(check_plain(ctx, outs[n + k], "a scan output"));
      scans[k].push_back(std::move(outs[n + k]));
    }
  }
  return Status::ok();
}

struct ScanShape {
  size_t n_states = 0, n_scan_in = 0, n_scan_out = 0;
};

Result<ScanShape> scan_shape(const KernelContext& ctx, const ir::Subgraph& sg, size_t n_inputs) {
  ScanShape s;
  const int64_t m = ctx.node().attr_int("num_scan_inputs", -1);
  if (m < 1 || static_cast<size_t>(m) > n_inputs)
    return ctx.error("num_scan_inputs is " + std::to_string(m) + " with " +
                     std::to_string(n_inputs) + " state and scan inputs");
  s.n_scan_in = static_cast<size_t>(m);
  s.n_states = n_inputs - s.n_scan_in;
  if (sg.num_formal_inputs != n_inputs)
    return ctx.error("the body has " + std::to_string(sg.num_formal_inputs) + " inputs; expected " +
                     std::to_string(n_inputs));
  const size_t outs = sg.model.graph->outputs().size();
  if (outs < s.n_states)
    return ctx.error("the body has fewer outputs than the " + std::to_string(s.n_states) +
                     " states");
  s.n_scan_out = outs - s.n_states;
  if (ctx.num_outputs() > outs)
    return ctx.error("the node has " + std::to_string(ctx.num_outputs()) +
                     " outputs but the body makes " + std::to_string(outs));
  return s;
}

Result<std::vector<int64_t>> int_list(const KernelContext& ctx, const char* attr, size_t n,
                                      int64_t dflt) {
  std::vector<int64_t> v = ctx.node().attr_ints(attr);
  if (v.empty()) return std::vector<int64_t>(n, dflt);
  if (v.size() != n)
    return ctx.error(std::string(attr) + " has " + std::to_string(v.size()) +
                     " entries; expected " + std::to_string(n));
  return v;
}

Status check_dirs(const KernelContext& ctx, const char* attr, const std::vector<int64_t>& d) {
  for (int64_t x : d)
    if (x != 0 && x != 1)
      return ctx.error(std::string(attr) + " holds " + std::to_string(x) + "; must be 0 or 1");
  return Status::ok();
}

// Scan 9+: no batch axis; scan inputs sliced along scan_input_axes, outputs stacked along
// scan_output_axes (negative axes count from the end).
Status scan9_kernel(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg,
                        ir::load_subgraph(ctx.node(), "body", subgraph_exec_options()));
  XOPT_ASSIGN_OR_RETURN(ScanShape s, scan_shape(ctx, sg, ctx.num_inputs()));
  XOPT_ASSIGN_OR_RETURN(auto in_axes, int_list(ctx, "scan_input_axes", s.n_scan_in, 0));
  XOPT_ASSIGN_OR_RETURN(auto in_dirs, int_list(ctx, "scan_input_directions", s.n_scan_in, 0));
  XOPT_ASSIGN_OR_RETURN(auto out_axes, int_list(ctx, "scan_output_axes", s.n_scan_out, 0));
  XOPT_ASSIGN_OR_RETURN(auto out_dirs, int_list(ctx, "scan_output_directions", s.n_scan_out, 0));
  XOPT_RETURN_IF_ERROR(check_dirs(ctx, "scan_input_directions", in_dirs));
  XOPT_RETURN_IF_ERROR(check_dirs(ctx, "scan_output_directions", out_dirs));

  std::vector<Tensor> states;
  for (size_t k = 0; k < s.n_states; ++k) {
    if (ctx.input(k) == nullptr)
      return ctx.error("state input " + std::to_string(k) + " is missing");
    states.push_back(*ctx.input(k));
  }
  std::vector<const Tensor*> xs;
  std::vector<size_t> axes;
  int64_t len = -1;
  for (size_t j = 0; j < s.n_scan_in; ++j) {
    const Tensor* x = ctx.input(s.n_states + j);
    if (x == nullptr) return ctx.error("scan input " + std::to_string(j) + " is missing");
    XOPT_RETURN_IF_ERROR(check_plain(ctx, *x, "a scan input"));
    const auto r = static_cast<int64_t>(x->rank());
    int64_t a = in_axes[j] < 0 ? in_axes[j] + r : in_axes[j];
    if (a < 0 || a >= r)
      return ctx.error("scan_input_axes[" + std::to_string(j) +
                       "] = " + std::to_string(in_axes[j]) + " is out of range for rank " +
                       std::to_string(r));
    const int64_t l = x->dims()[static_cast<size_t>(a)];
    if (len >= 0 && l != len)
      return ctx.error("scan inputs disagree on the sequence length (" + std::to_string(len) +
                       " and " + std::to_string(l) + ")");
    len = l;
    xs.push_back(x);
    axes.push_back(static_cast<size_t>(a));
  }
  std::map<std::string, Tensor> ins;
  XOPT_RETURN_IF_ERROR(add_outer(ctx, sg, ins));
  std::vector<std::vector<Tensor>> scans(s.n_scan_out);
  XOPT_RETURN_IF_ERROR(scan_steps(ctx, sg, ins, states, xs, axes, in_dirs, len, scans));

  for (size_t k = 0; k < s.n_states && k < ctx.num_outputs(); ++k)
    if (ctx.wants_output(k)) XOPT_RETURN_IF_ERROR(ctx.forward(k, states[k]));
  for (size_t k = 0; k < s.n_scan_out && s.n_states + k < ctx.num_outputs(); ++k) {
    if (!ctx.wants_output(s.n_states + k)) continue;
    std::vector<int64_t> elem;
    ir::DType dtype;
    if (scans[k].empty()) {
      XOPT_ASSIGN_OR_RETURN(auto d, declared_elem(ctx, sg, s.n_states + k));
      std::tie(elem, dtype) = d;
    } else {
      elem = scans[k][0].dims();
      dtype = scans[k][0].dtype();
    }
    const auto r = static_cast<int64_t>(elem.size()) + 1;
    const int64_t a = out_axes[k] < 0 ? out_axes[k] + r : out_axes[k];
    if (a < 0 || a >= r)
      return ctx.error("scan_output_axes[" + std::to_string(k) +
                       "] = " + std::to_string(out_axes[k]) + " is out of range for rank " +
                       std::to_string(r));
    if (out_dirs[k] == 1) std::reverse(scans[k].begin(), scans[k].end());
    XOPT_ASSIGN_OR_RETURN(Tensor t, stack_axis(ctx, scans[k], static_cast<size_t>(a), elem, dtype));
    XOPT_RETURN_IF_ERROR(ctx.forward(s.n_states + k, t));
  }
  return Status::ok();
}

// Scan 8: input 0 is the optional sequence_lens, every other input and output has a leading batch
// axis, scan inputs are [batch, sequence, ...] and `directions` reverses a scan input. Each batch
// row runs on its own; scan outputs past a row's length are zero.
Status scan8_kernel(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg,
                        ir::load_subgraph(ctx.node(), "body", subgraph_exec_options()));
  const size_t n_inputs = ctx.num_inputs() == 0 ? 0 : ctx.num_inputs() - 1;
  XOPT_ASSIGN_OR_RETURN(ScanShape s, scan_shape(ctx, sg, n_inputs));
  XOPT_ASSIGN_OR_RETURN(auto dirs, int_list(ctx, "directions", s.n_scan_in, 0));
  XOPT_RETURN_IF_ERROR(check_dirs(ctx, "directions", dirs));
  std::vector<const Tensor*> all;
  for (size_t i = 0; i < n_inputs; ++i) {
    const Tensor* t = ctx.input(1 + i);
    if (t == nullptr) return ctx.error("input " + std::to_string(1 + i) + " is missing");
    XOPT_RETURN_IF_ERROR(check_plain(ctx, *t, "an input"));
    if (t->rank() < (i < s.n_states ? 1u : 2u))
      return ctx.error("input " + std::to_string(1 + i) + " lacks the batch (and sequence) axes");
    all.push_back(t);
  }
  const int64_t batch = all[0]->dims()[0];
  int64_t max_len = all[s.n_states]->dims()[1];
  for (const Tensor* t : all)
    if (t->dims()[0] != batch) return ctx.error("inputs disagree on the batch size");
  for (size_t j = 0; j < s.n_scan_in; ++j)
    if (all[s.n_states + j]->dims()[1] != max_len)
      return ctx.error("scan inputs disagree on the sequence length");
  const Tensor* lens = ctx.input(0);
  if (lens != nullptr && lens->numel() != batch)
    return ctx.error("sequence_lens has " + std::to_string(lens->numel()) + " entries for batch " +
                     std::to_string(batch));

  std::map<std::string, Tensor> ins;
  XOPT_RETURN_IF_ERROR(add_outer(ctx, sg, ins));
  std::vector<std::vector<Tensor>> final_states(s.n_states);
  std::vector<std::vector<Tensor>> scan_rows(s.n_scan_out);  // [len, ...] per batch row
  std::vector<std::vector<std::vector<Tensor>>> steps(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens != nullptr ? lens->as_int64(b) : max_len;
    if (len < 0 || len > max_len)
      return ctx.error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                       " is outside [0, " + std::to_string(max_len) + "]");
    std::vector<Tensor> states;
    for (size_t k = 0; k < s.n_states; ++k) states.push_back(slice_axis(*all[k], 0, b));
    std::vector<Tensor> rows;
    for (size_t j = 0; j < s.n_scan_in; ++j) rows.push_back(slice_axis(*all[s.n_states + j], 0, b));
    std::vector<const Tensor*> xs;
    for (const Tensor& r : rows) xs.push_back(&r);
    std::vector<size_t> axes(s.n_scan_in, 0);
    auto& sc = steps[static_cast<size_t>(b)];
    sc.resize(s.n_scan_out);
    XOPT_RETURN_IF_ERROR(scan_steps(ctx, sg, ins, states, xs, axes, dirs, len, sc));
    for (size_t k = 0; k < s.n_states; ++k) final_states[k].push_back(std::move(states[k]));
  }
  for (size_t k = 0; k < s.n_states && k < ctx.num_outputs(); ++k) {
    if (!ctx.wants_output(k)) continue;
    if (batch == 0) return ctx.unsupported("a batch of 0 rows");
    XOPT_ASSIGN_OR_RETURN(Tensor t, stack_axis(ctx, final_states[k], 0, final_states[k][0].dims(),
                                               final_states[k][0].dtype()));
    XOPT_RETURN_IF_ERROR(ctx.forward(k, t));
  }
  for (size_t k = 0; k < s.n_scan_out && s.n_states + k < ctx.num_outputs(); ++k) {
    if (!ctx.wants_output(s.n_states + k)) continue;
    std::vector<int64_t> elem;
    ir::DType dtype = ir::DType::kUndefined;
    for (const auto& sc : steps)
      if (!sc[k].empty()) {
        elem = sc[k][0].dims();
        dtype = sc[k][0].dtype();
      }
    if (dtype == ir::DType::kUndefined) {
      XOPT_ASSIGN_OR_RETURN(auto d, declared_elem(ctx, sg, s.n_states + k));
      std::tie(elem, dtype) = d;
    }
    std::vector<Tensor> per_batch;
    for (auto& sc : steps) {
      std::vector<Tensor> padded = std::move(sc[k]);
      while (static_cast<int64_t>(padded.size()) < max_len) padded.emplace_back(dtype, elem);
      XOPT_ASSIGN_OR_RETURN(Tensor row, stack_axis(ctx, padded, 0, elem, dtype));
      per_batch.push_back(std::move(row));
    }
    std::vector<int64_t> row_dims = elem;
    row_dims.insert(row_dims.begin(), max_len);
    XOPT_ASSIGN_OR_RETURN(Tensor t, stack_axis(ctx, per_batch, 0, row_dims, dtype));
    XOPT_RETURN_IF_ERROR(ctx.forward(s.n_states + k, t));
  }
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "If", 1, ir::kMaxOpset, if_kernel);
XOPT_CPU_KERNEL("", "Loop", 1, ir::kMaxOpset, loop_kernel);
XOPT_CPU_KERNEL("", "Scan", 8, 8, scan8_kernel);
XOPT_CPU_KERNEL("", "Scan", 9, ir::kMaxOpset, scan9_kernel);

}  // namespace xopt::exec
