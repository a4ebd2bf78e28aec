#include "executor/cuda/session_layout.h"

#include <algorithm>
#include <utility>

#include "planner/intervals.h"
#include "planner/planner.h"

namespace xopt::cuda {

namespace {

// A value's slice in `region` at `offset`, from its static shape; errors for what the GPU cannot
// hold (strings, sequences) and for shapes the plan did not make static.
Result<Slice> static_slice(const ir::Value& v, Region region, size_t offset) {
  if (!v.is_tensor() || v.dtype() == ir::DType::kString || v.dtype() == ir::DType::kUndefined)
    return unsupported("CUDA executor: " + describe_value(v) +
                       " is not a numeric tensor (strings, sequences and maps stay on the CPU)");
  if (!v.shape().is_static())
    return invalid_argument("CUDA executor: " + describe_value(v) +
                            " has no static shape: plan the model with --input-shape or --batch");
  return Slice{region, offset, v.dtype(), v.shape().static_dims()};
}

Slice initializer_slice(const ir::Value& v, Region region, size_t offset) {
  return Slice{region, offset, v.initializer()->dtype(), v.initializer()->dims()};
}

// Graph inputs the plan does not place, and node outputs it does not place (graph outputs and
// outputs nobody reads): one after another in the I/O region.
Status lay_out_io(const ir::Graph& g, const planner::MemoryPlan& plan, SessionLayout& layout) {
  auto add_io = [&](const ir::Value* v) -> Status {
    XOPT_ASSIGN_OR_RETURN(Slice s, static_slice(*v, Region::kIo, layout.io_bytes));
    layout.io_bytes += planner::align_up(s.nbytes(), layout.alignment);
    layout.slices[v] = std::move(s);
    return Status::ok();
  };
  auto planned = [&](const ir::Value* v) { return plan.find(v->name()) != nullptr; };
  for (const ir::Value* v : g.runtime_inputs())
    if (!planned(v)) XOPT_RETURN_IF_ERROR(add_io(v));
  for (const ir::Node* n : layout.order)
    for (const ir::Value* v : n->outputs()) {
      if (v == nullptr || planned(v)) continue;
      if (v->has_uses() && !v->is_graph_output())
        return invalid_argument("memory plan: " + describe_value(*v) + " (produced by " +
                                n->describe() + ") is read but has no place in the plan");
      if (v->is_graph_output() && plan.io_in_arena)
        return invalid_argument("memory plan: graph output '" + v->name() +
                                "' has no place in the plan although it plans inputs and outputs "
                                "in the arena");
      XOPT_RETURN_IF_ERROR(add_io(v));
    }
  return Status::ok();
}

// Offloaded weights: their staging slices and the copies that fill them (check_offload first).
void lay_out_staging(const ir::Graph& g, const planner::OffloadPlan& offload,
                     SessionLayout& layout) {
  if (offload.weights.empty()) return;
  layout.staging_bytes = offload.staging_bytes;
  layout.offloaded_bytes = offload.offloaded_bytes;
  size_t host_offset = 0;
  for (const planner::OffloadedWeight& w : offload.weights) {
    const ir::Value* v = g.find_value(w.name);
    layout.copies.push_back({v, host_offset, w.offset, w.bytes, w.prefetch_step, w.first_use});
    host_offset += w.size;
    layout.slices[v] = initializer_slice(*v, Region::kStaging, w.offset);
  }
}

// Every initializer not offloaded, each aligned, in the graph's initializer order.
Status lay_out_parameters(const ir::Graph& g, const std::optional<planner::OffloadPlan>& offload,
                          SessionLayout& layout) {
  auto offloaded = [&](const ir::Value* v) {
    return offload &&
           std::any_of(offload->weights.begin(), offload->weights.end(),
                       [&](const planner::OffloadedWeight& w) { return w.name == v->name(); });
  };
  for (const ir::Value* v : g.initializers()) {
    if (v->initializer() == nullptr || offloaded(v)) continue;
    if (v->initializer()->dtype() == ir::DType::kString)
      return unsupported("CUDA executor: initializer '" + v->name() + "' holds strings");
    layout.slices[v] = initializer_slice(*v, Region::kParameters, layout.parameter_bytes);
    layout.parameters.push_back(v);
    layout.parameter_bytes += planner::align_up(v->initializer()->nbytes(), layout.alignment);
  }
  return Status::ok();
}

// Every planned value but the workspaces, at its plan offset, of exactly its planned bytes.
Status lay_out_arena(const ir::Graph& g, const planner::MemoryPlan& plan, SessionLayout& layout) {
  for (const planner::PlannedValue& pv : plan.values) {
    if (pv.role == "workspace") continue;
    const ir::Value* v = g.find_value(pv.name);
    if (v == nullptr)
      return invalid_argument("memory plan: planned value '" + pv.name + "' is not in the graph");
    XOPT_ASSIGN_OR_RETURN(Slice s, static_slice(*v, Region::kArena, pv.offset));
    if (s.nbytes() != pv.bytes)
      return invalid_argument("memory plan: " + describe_value(*v) + " needs " +
                              std::to_string(s.nbytes()) + " bytes but the plan gives it " +
                              std::to_string(pv.bytes));
    layout.slices[v] = std::move(s);
  }
  return Status::ok();
}

// The slices of `values` (nullopt for omitted ones); an error names `n` and the first value
// without one.
Result<std::vector<std::optional<Slice>>> slices_of(const ir::Node& n,
                                                    const std::vector<ir::Value*>& values,
                                                    const SessionLayout& layout) {
  std::vector<std::optional<Slice>> out;
  out.reserve(values.size());
  for (const ir::Value* v : values) {
    if (v == nullptr) {
      out.emplace_back();
      continue;
    }
    auto it = layout.slices.find(v);
    if (it == layout.slices.end())
      return invalid_argument(n.describe() + ": input " + describe_value(*v) +
                              " has no device memory (not planned, not a parameter, not a "
                              "graph input)");
    out.emplace_back(it->second);
  }
  return out;
}

}  // namespace

const char* region_name(Region r) {
  switch (r) {
    case Region::kParameters:
      return "parameters";
    case Region::kArena:
      return "arena";
    case Region::kIo:
      return "io";
    case Region::kStaging:
      return "staging";
  }
  return "?";
}

size_t Slice::nbytes() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return static_cast<size_t>(n) * ir::dtype_size(dtype);
}

std::string describe_value(const ir::Value& v) {
  return "value '" + v.name() + "' (" + std::string(ir::dtype_name(v.dtype())) + " " +
         v.shape().to_string() + ")";
}

Status check_offload(const planner::OffloadPlan& offload, const ir::Graph& g,
                     const std::vector<const ir::Node*>& order, const planner::MemoryPlan& plan) {
  if (offload.steps != static_cast<int>(order.size()) || offload.alignment != plan.alignment)
    return invalid_argument("offload schedule: made for " + std::to_string(offload.steps) +
                            " steps at alignment " + std::to_string(offload.alignment) +
                            ", the plan has " + std::to_string(order.size()) + " at " +
                            std::to_string(plan.alignment));
  for (const planner::OffloadedWeight& w : offload.weights) {
    const ir::Value* v = g.find_value(w.name);
    if (v == nullptr || !v->is_constant() || v->initializer()->nbytes() != w.bytes)
      return invalid_argument("offload schedule: '" + w.name + "' (" + std::to_string(w.bytes) +
                              " bytes) is not a weight of that size in the graph");
    for (const ir::Use& u : v->uses()) {
      const auto at = std::find(order.begin(), order.end(), u.node);
      const int step = static_cast<int>(at - order.begin());
      if (u.index < 0 || at == order.end() || step < w.first_use || step > w.last_use)
        return invalid_argument("offload schedule: '" + w.name + "' is read by " +
                                u.node->describe() + " outside its staged steps " +
                                std::to_string(w.first_use) + ".." + std::to_string(w.last_use));
    }
  }
  return Status::ok();
}

Status lay_out_regions(const ir::Graph& g, const planner::MemoryPlan& plan,
                       const std::optional<planner::OffloadPlan>& offload, SessionLayout& layout) {
  layout.alignment = plan.alignment;
  layout.arena_bytes = plan.arena_bytes;
  // Later places win: a value planned in the arena is there, whatever else named it.
  XOPT_RETURN_IF_ERROR(lay_out_io(g, plan, layout));
  if (offload) lay_out_staging(g, *offload, layout);
  XOPT_RETURN_IF_ERROR(lay_out_parameters(g, offload, layout));
  XOPT_RETURN_IF_ERROR(lay_out_arena(g, plan, layout));
  for (const ir::Value* v : g.runtime_inputs()) layout.inputs.push_back(v);
  return Status::ok();
}

Status bind_nodes(const ir::Graph& g, const planner::MemoryPlan& plan, const LayoutOptions& options,
                  SessionLayout& layout) {
  // Workspace in the arena (planning for the GPU does that): each node's own planned bytes. A
  // session compiling with a workspace limit of its own (measuring) uses its region instead.
  layout.workspace_in_arena = plan.workspace_in_arena && options.workspace_limit == 0;
  layout.workspace_limit =
      options.workspace_limit != 0 ? options.workspace_limit : plan.workspace_bytes;
  std::unordered_map<std::string, const planner::PlannedValue*> ws_value;
  for (const planner::PlannedValue& pv : plan.values)
    if (pv.role == "workspace") ws_value[pv.name] = &pv;
  for (size_t s = 0; s < layout.order.size(); ++s) {
    const ir::Node& n = *layout.order[s];
    NodeBinding b;
    b.node = &n;
    XOPT_ASSIGN_OR_RETURN(b.inputs, slices_of(n, n.inputs(), layout));
    XOPT_ASSIGN_OR_RETURN(b.outputs, slices_of(n, n.outputs(), layout));
    const planner::PlannedValue* own_ws = nullptr;
    if (layout.workspace_in_arena) {
      auto it = ws_value.find(planner::workspace_value_name(planner::node_key(n)));
      own_ws = it == ws_value.end() ? nullptr : it->second;
    }
    if (own_ws != nullptr) b.workspace_offset = own_ws->offset;
    b.workspace_limit = !layout.workspace_in_arena ? layout.workspace_limit
                        : own_ws != nullptr        ? own_ws->bytes
                                                   : 0;
    // Measuring with a limit per node (the bytes the activations leave free at its step).
    b.soft_limit = options.workspace_limit != 0 && s < options.node_workspace_limit.size();
    if (b.soft_limit)
      b.workspace_limit = std::min(layout.workspace_limit, options.node_workspace_limit[s]);
    layout.nodes.push_back(std::move(b));
  }
  for (const ir::Value* v : g.outputs()) {
    if (layout.slices.count(v) == 0)
      return invalid_model("graph output '" + v->name() + "' is never computed");
    layout.outputs.push_back(v);
  }
  return Status::ok();
}

Status check_fits_shared_arena(const planner::MemoryPlan& plan, const planner::SharedArena& sh) {
  if (plan.arena_bytes <= sh.arena_bytes && plan.workspace_bytes <= sh.workspace_bytes &&
      plan.alignment == sh.alignment)
    return Status::ok();
  return invalid_argument(
      "shared arena '" + sh.id + "' (arena " + std::to_string(sh.arena_bytes) + ", workspace " +
      std::to_string(sh.workspace_bytes) + ", alignment " + std::to_string(sh.alignment) +
      ") cannot hold this plan (arena " + std::to_string(plan.arena_bytes) + ", workspace " +
      std::to_string(plan.workspace_bytes) + ", alignment " + std::to_string(plan.alignment) + ")");
}

Result<SessionLayout> lay_out_session(const ir::Graph& graph, const planner::MemoryPlan& plan,
                                      std::vector<const ir::Node*> order,
                                      const std::optional<planner::OffloadPlan>& offload,
                                      const LayoutOptions& options) {
  if (offload) XOPT_RETURN_IF_ERROR(check_offload(*offload, graph, order, plan));
  if (!plan.node_order.empty() && plan.node_order.size() != order.size())
    return invalid_argument("memory plan: it orders " + std::to_string(plan.node_order.size()) +
                            " nodes but the graph has " + std::to_string(order.size()));
  SessionLayout layout;
  layout.order = std::move(order);
  XOPT_RETURN_IF_ERROR(lay_out_regions(graph, plan, offload, layout));
  XOPT_RETURN_IF_ERROR(bind_nodes(graph, plan, options, layout));
  return layout;
}

}  // namespace xopt::cuda
