#include "precision/local_error.h"

#include <algorithm>
#include <cmath>

#include "executor/cpu/allocator.h"
#include "executor/cpu/kernel.h"
#include "precision/float_data.h"

namespace xopt::precision {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// max|a - b| / max|b| over the elements; inf where a is not finite and b is.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return kInf;
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(b[i])) continue;  // already non-finite in fp32: nothing to lose
    if (!std::isfinite(a[i])) return kInf;
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  if (diff == 0.0) return 0.0;
  return scale == 0.0 ? kInf : diff / scale;
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
  if (!node.name().empty()) return node.name();
  const ir::Value* v = node.output(0);
  return "@" + (v != nullptr ? v->name() : std::string());
}

LocalError node_local_error(const ir::Node& node,
                            const std::map<std::string, ir::Tensor, std::less<>>& values) {
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
  for (bool kernel_in_type : {true, false}) {
    double err[2] = {0.0, 0.0};
    bool ran = true;
    const ir::DType types[2] = {ir::DType::kFloat16, ir::DType::kBFloat16};
    for (int k = 0; k < 2 && ran; ++k) {
      auto outs = run_in(node, ins, types[k], kernel_in_type);
      if (!outs) {
        ran = false;
        e.problem = "does not run on its calibration inputs: " + outs.status().message();
        break;
      }
      for (size_t i = 0; i < ref.size() && i < outs->size(); ++i)
        if (!ref[i].empty()) err[k] = std::max(err[k], relative_error((*outs)[i], ref[i]));
    }
    if (!ran) continue;
    e.fp16 = err[0];
    e.bf16 = err[1];
    e.method = kernel_in_type ? "kernel" : "rounded";
    e.problem.clear();
    return e;
  }
  return e;
}

std::map<std::string, LocalError, std::less<>> local_errors(const ir::Graph& graph,
                                                           const Calibration& calibration) {
  std::map<std::string, LocalError, std::less<>> out;
  for (const ir::Node* n : graph.node_list()) {
    out[node_key(*n)] = node_local_error(*n, calibration.values);
  }
  return out;
}

}  // namespace xopt::precision
