// SequenceMap: runs its body once per element of the input sequences, like a Loop whose iterations
// are independent. The body runs with run_model_values in simple mode (its values live outside the
// memory plan, as the control-flow bodies do; planner/README.md); each body output becomes a
// sequence output of the node.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/cpu/kernel.h"
#include "executor/cpu/kernels/tensor_util.h"
#include "executor/cpu/subgraph_run.h"
#include "ir/subgraph.h"
#include "ir/value_type.h"

namespace xopt::exec {
namespace {

Status sequence_map(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg,
                        ir::load_subgraph(ctx.node(), "body", subgraph_exec_options()));
  const ir::Graph& body = *sg.model.graph;
  if (sg.num_formal_inputs != ctx.num_inputs())
    return ctx.error("the body has " + std::to_string(sg.num_formal_inputs) +
                     " inputs but the node has " + std::to_string(ctx.num_inputs()));
  if (body.outputs().size() != ctx.num_outputs())
    return ctx.error("the body has " + std::to_string(body.outputs().size()) +
                     " outputs but the node has " + std::to_string(ctx.num_outputs()));

  std::map<std::string, ExecValue> ins;
  XOPT_RETURN_IF_ERROR(add_outer_values(ctx, sg, ins));
  // Sequence inputs are taken element by element (all of the same length); tensors every time.
  std::optional<size_t> n;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    std::optional<ExecValue> v = ctx.any_input(i);
    if (!v) return ctx.error("input " + std::to_string(i) + " is missing");
    if (i == 0 && !v->is_sequence())
      return ctx.error("input_sequence is a " + v->describe() + ", not a sequence");
    if (v->is_optional()) return ctx.error("input " + std::to_string(i) + " is an optional");
    if (!v->is_sequence()) {
      ins[body.inputs()[i]->name()] = std::move(*v);
      continue;
    }
    if (n && *n != v->items().size())
      return ctx.error("input " + std::to_string(i) + " has " + std::to_string(v->items().size()) +
                       " elements but input_sequence has " + std::to_string(*n));
    n = v->items().size();
  }

  std::vector<std::vector<ir::Tensor>> results(ctx.num_outputs());
  for (size_t e = 0; e < *n; ++e) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (const ExecValue* v = ctx.input_value(i); v != nullptr && v->is_sequence())
        ins[body.inputs()[i]->name()] = ExecValue::of_tensor(v->items()[e]);
    auto outs = run_body_values(ctx, sg, ins);
    if (!outs.is_ok()) return outs.status().with_context("element " + std::to_string(e) + ": ");
    for (size_t k = 0; k < outs->size(); ++k) {
      ExecValue& o = (*outs)[k];
      if (!o.is_tensor())
        return ctx.unsupported("body output " + std::to_string(k) + " is a " + o.describe() +
                               ": sequences of sequences are not supported");
      // A body output may be an outer tensor passed through, possibly an arena slot: copied.
      results[k].push_back(own_copy(o.tensor()));
    }
  }
  for (size_t k = 0; k < results.size(); ++k) {
    // The element type when no element ran: what the node's output or the body declares.
    ir::DType d = results[k].empty() ? ir::DType::kUndefined : results[k][0].dtype();
    if (d == ir::DType::kUndefined && ctx.node().output(k) != nullptr)
      d = ir::innermost_dtype(ir::value_type(*ctx.node().output(k)));
    if (d == ir::DType::kUndefined) d = body.outputs()[k]->dtype();
    XOPT_RETURN_IF_ERROR(ctx.set_output_value(k, ExecValue::of_sequence(std::move(results[k]), d)));
  }
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "SequenceMap", 17, kLatestOpset, sequence_map);

}  // namespace xopt::exec
