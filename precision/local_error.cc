#include "precision/local_error.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "executor/cpu/allocator.h"
#include "executor/cpu/kernel.h"
#include "passes/precision/precision_analysis.h"
#include "precision/float_data.h"

namespace xopt::precision {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ||a - b|| / ||b|| (2-norms) over the elements where b is finite; inf where a is not finite and
// b is, or where b is all zero and a is not.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return kInf;
  double diff2 = 0.0, scale2 = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(b[i])) continue;  // already non-finite in fp32: nothing to lose
    if (!std::isfinite(a[i])) return kInf;
    const double d = static_cast<double>(a[i]) - b[i];
    diff2 += d * d;
    scale2 += static_cast<double>(b[i]) * b[i];
  }
  if (diff2 == 0.0) return 0.0;
  return scale2 == 0.0 ? kInf : std::sqrt(diff2 / scale2);
}

// Runs the node's kernel on `inputs`; outputs or an error.
Result<std::vector<ir::Tensor>> run_node(const ir::Node& node,
                                         const std::vector<const ir::Tensor*>& inputs) {
  const exec::KernelDef* k =
      exec::KernelRegistry::global().find(node.domain(), node.op_type(), node.opset());
  if (k == nullptr) return unsupported("no CPU kernel");
  exec::SimpleAllocator alloc;
  std::vector<ir::Tensor> outs(node.num_outputs());
  exec::KernelContext ctx(node, inputs, &outs, &alloc);
  XOPT_RETURN_IF_ERROR(k->fn(ctx));
  if (!ctx.value_outputs().empty()) return unsupported("an output that is not a tensor");
  return outs;
}

// The node in type t: every fp32 input rounded to t, outputs read back as float (per output; empty
// for outputs that are not float). `kernel_in_type`: pass the rounded inputs as t tensors to the
// node's own kernel; else as fp32 tensors to the fp32 kernel, and round the outputs to t.
Result<std::vector<std::vector<float>>> run_in(const ir::Node& node,
                                               const std::vector<const ir::Tensor*>& fp32_inputs,
                                               ir::DType t, bool kernel_in_type) {
  std::vector<ir::Tensor> converted(fp32_inputs.size());
  std::vector<const ir::Tensor*> ins(fp32_inputs.size(), nullptr);
  for (size_t i = 0; i < fp32_inputs.size(); ++i) {
    const ir::Tensor* x = fp32_inputs[i];
    if (x == nullptr || x->dtype() != ir::DType::kFloat) {
      ins[i] = x;
      continue;
    }
    std::vector<float> f = to_floats(*x);
    if (!kernel_in_type)
      for (float& v : f) v = round_to(t, v);
    converted[i] = from_floats(kernel_in_type ? t : ir::DType::kFloat, x->dims(), f);
    ins[i] = &converted[i];
  }
  XOPT_ASSIGN_OR_RETURN(auto outs, run_node(node, ins));
  std::vector<std::vector<float>> res(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!ir::is_float(outs[i].dtype())) continue;
    res[i] = to_floats(outs[i]);
    if (!kernel_in_type && outs[i].dtype() == ir::DType::kFloat)
      for (float& v : res[i]) v = round_to(t, v);
  }
  return res;
}

}  // namespace

std::string node_key(const ir::Node& node) {
  return passes::precision_node_key(node);
}

namespace {

using Position = std::unordered_map<const ir::Node*, size_t>;

Position positions(const ir::Graph& g) {
  Position pos;
  size_t k = 0;
  for (const ir::Node* n : g.nodes()) pos[n] = k++;
  return pos;
}

// Moves data without arithmetic: no hop of its own.
bool is_layout(const ir::Node& n) {
  return n.is("Transpose") || n.is("Reshape") || n.is("Identity") || n.is("Squeeze") ||
         n.is("Unsqueeze") || n.is("Flatten");
}

// Carries `perturbed` (values by name, as fp32 tensors) up to `hops` nodes downstream, each of them
// in fp32; returns the largest relative error seen there and where.
std::pair<double, std::string> downstream_error(
    const ir::Node& node, std::map<std::string, ir::Tensor, std::less<>> perturbed,
    const std::map<std::string, ir::Tensor, std::less<>>& values, int hops, const Position& pos) {
  double worst = 0.0;
  std::string where;
  // Downstream nodes by graph position, with the hops left after them.
  std::map<size_t, std::pair<const ir::Node*, int>> todo;
  auto add_consumers = [&](const ir::Node& n, int left) {
    for (const ir::Value* v : n.outputs()) {
      if (v == nullptr || perturbed.count(v->name()) == 0) continue;
      for (const ir::Use& u : v->uses()) {
        auto p = pos.find(u.node);
        if (p == pos.end() || u.index < 0) continue;
        const int after = is_layout(*u.node) ? left : left - 1;
        if (after < 0) continue;
        auto [it, fresh] = todo.emplace(p->second, std::make_pair(u.node, after));
        if (!fresh) it->second.second = std::max(it->second.second, after);
      }
    }
  };
  add_consumers(node, hops);
  while (!todo.empty()) {
    auto [n, left] = todo.begin()->second;
    todo.erase(todo.begin());
    if (!n->implicit_inputs().empty()) continue;
    std::vector<const ir::Tensor*> ins;
    bool ok = true;
    for (const ir::Value* v : n->inputs()) {
      if (v == nullptr) {
        ins.push_back(nullptr);
        continue;
      }
      const ir::Tensor* t = nullptr;
      if (auto p = perturbed.find(v->name()); p != perturbed.end()) {
        t = &p->second;
      } else if (auto r = values.find(v->name()); r != values.end()) {
        t = &r->second;
      }
      if (t == nullptr) {
        ok = false;
        break;
      }
      ins.push_back(t);
    }
    if (!ok) continue;
    auto outs = run_node(*n, ins);
    if (!outs) continue;  // a node that does not run here stops the walk on this path
    for (size_t i = 0; i < n->num_outputs() && i < outs->size(); ++i) {
      const ir::Value* v = n->output(i);
      if (v == nullptr || (*outs)[i].dtype() != ir::DType::kFloat) continue;
      auto ref = values.find(v->name());
      if (ref == values.end()) continue;
      const double e = relative_error(to_floats((*outs)[i]), to_floats(ref->second));
      if (e > worst) {
        worst = e;
        where = node_key(*n);
      }
      perturbed[v->name()] = std::move((*outs)[i]);
    }
    add_consumers(*n, left);
  }
  return {worst, where};
}

LocalError local_error_at(const ir::Node& node,
                          const std::map<std::string, ir::Tensor, std::less<>>& values,
                          const LocalErrorOptions& options, const Position& pos) {
  LocalError e;
  if (!node.implicit_inputs().empty()) {
    e.problem = "has a subgraph";
    return e;
  }
  std::vector<const ir::Tensor*> ins;
  bool float_input = false;
  for (const ir::Value* v : node.inputs()) {
    if (v == nullptr) {
      ins.push_back(nullptr);
      continue;
    }
    auto it = values.find(v->name());
    if (it == values.end()) {
      e.problem = "input '" + v->name() + "' not computed in the calibration run";
      return e;
    }
    float_input = float_input || it->second.dtype() == ir::DType::kFloat;
    ins.push_back(&it->second);
  }
  std::vector<std::vector<float>> ref;
  bool float_output = false;
  for (const ir::Value* v : node.outputs()) {
    auto it = v == nullptr ? values.end() : values.find(v->name());
    if (it != values.end() && it->second.dtype() == ir::DType::kFloat) {
      ref.push_back(to_floats(it->second));
      float_output = true;
    } else {
      ref.emplace_back();
    }
  }
  if (!float_output || !float_input) {
    e.problem = float_output ? "no fp32 input" : "no fp32 output";
    return e;
  }
  const ir::DType types[2] = {ir::DType::kFloat16, ir::DType::kBFloat16};
  for (bool kernel_in_type : {true, false}) {
    double own[2] = {0.0, 0.0}, seen[2] = {0.0, 0.0};
    std::string where16;
    bool ran = true;
    for (int k = 0; k < 2 && ran; ++k) {
      auto outs = run_in(node, ins, types[k], kernel_in_type);
      if (!outs) {
        ran = false;
        e.problem = "does not run on its calibration inputs: " + outs.status().message();
        break;
      }
      std::map<std::string, ir::Tensor, std::less<>> perturbed;
      for (size_t i = 0; i < ref.size() && i < outs->size(); ++i) {
        if (ref[i].empty()) continue;
        own[k] = std::max(own[k], relative_error((*outs)[i], ref[i]));
        const ir::Tensor& y = values.find(node.output(i)->name())->second;
        perturbed[node.output(i)->name()] = from_floats(ir::DType::kFloat, y.dims(), (*outs)[i]);
      }
      seen[k] = own[k];
      if (options.hops > 0 && std::isfinite(own[k])) {
        auto [d, where] = downstream_error(node, std::move(perturbed), values, options.hops, pos);
        if (d > seen[k]) {
          seen[k] = d;
          if (k == 0) where16 = where;
        }
      }
    }
    if (!ran) continue;
    e.own_fp16 = own[0];
    e.own_bf16 = own[1];
    e.fp16 = seen[0];
    e.bf16 = seen[1];
    e.worst_at_fp16 = where16;
    e.method = kernel_in_type ? "kernel" : "rounded";
    e.problem.clear();
    return e;
  }
  return e;
}

}  // namespace

LocalError node_local_error(const ir::Node& node,
                            const std::map<std::string, ir::Tensor, std::less<>>& values,
                            const LocalErrorOptions& options) {
  return local_error_at(node, values, options, positions(*node.graph()));
}

std::map<std::string, LocalError, std::less<>> local_errors(const ir::Graph& graph,
                                                            const Calibration& calibration,
                                                            const LocalErrorOptions& options) {
  const Position pos = positions(graph);
  std::map<std::string, LocalError, std::less<>> out;
  for (const ir::Node* n : graph.nodes())
    out[node_key(*n)] = local_error_at(*n, calibration.values, options, pos);
  return out;
}

}  // namespace xopt::precision
