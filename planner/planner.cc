#include "planner/planner.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "planner/aliasing.h"
#include "planner/intervals.h"
#include "planner/lifetimes.h"
#include "planner/workspace.h"

namespace xopt::planner {
namespace {

const char* kind_name(AliasKind k) {
  switch (k) {
    case AliasKind::kView:
      return "view";
    case AliasKind::kInPlace:
      return "in-place";
    case AliasKind::kNone:
      break;
  }
  return "";
}

Status check_strategies(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (std::find(strategy_names().begin(), strategy_names().end(), n) == strategy_names().end()) {
      std::string known;
      for (const auto& k : strategy_names()) known += (known.empty() ? "" : ", ") + k;
      return invalid_argument("unknown planner strategy '" + n + "' (known: " + known + ")");
    }
  return Status::ok();
}

}  // namespace

std::string node_key(const ir::Node& n) {
  if (!n.name().empty()) return n.name();
  for (const ir::Value* v : n.outputs())
    if (v != nullptr) return "@" + v->name();
  return "@" + n.op_type();
}

Result<std::vector<const ir::Node*>> resolve_node_order(const ir::Graph& graph,
                                                        const MemoryPlan& plan) {
  if (plan.node_order.empty()) return graph_order(graph);  // a plan made on the graph's own order
  std::unordered_map<std::string, const ir::Node*> by_key;
  std::unordered_set<std::string> ambiguous;
  for (const ir::Node* n : graph.nodes())
    if (!by_key.emplace(node_key(*n), n).second) ambiguous.insert(node_key(*n));
  std::vector<const ir::Node*> order;
  std::unordered_set<const ir::Node*> seen;
  for (const std::string& key : plan.node_order) {
    if (ambiguous.count(key))
      return invalid_argument("memory plan: node name '" + key +
                              "' is not unique in the graph, so node_order is ambiguous");
    auto it = by_key.find(key);
    if (it == by_key.end())
      return invalid_argument("memory plan: node '" + key + "' of node_order is not in the graph");
    if (!seen.insert(it->second).second)
      return invalid_argument("memory plan: node '" + key + "' appears twice in node_order");
    order.push_back(it->second);
  }
  if (order.size() != graph.num_nodes())
    return invalid_argument("memory plan: node_order lists " + std::to_string(order.size()) +
                            " nodes, the graph has " + std::to_string(graph.num_nodes()));
  return order;
}

size_t parameter_bytes(const ir::Graph& graph, size_t alignment) {
  size_t total = 0;
  for (const ir::Value* v : graph.initializers())
    if (v->initializer() != nullptr) total += align_up(v->initializer()->nbytes(), alignment);
  return total;
}

size_t io_region_bytes(const ir::Graph& graph, const MemoryPlan& plan) {
  std::unordered_set<std::string> planned;
  planned.reserve(plan.values.size());
  for (const PlannedValue& v : plan.values) planned.insert(v.name);
  size_t total = 0;
  auto add = [&](const ir::Value* v) {
    if (v == nullptr || planned.count(v->name()) != 0 || !v->is_tensor() || !v->shape().is_static())
      return;
    const int64_t n = ir::numel(v->shape().static_dims());
    total += align_up(static_cast<size_t>(n) * ir::dtype_size(v->dtype()), plan.alignment);
  };
  for (const ir::Value* v : graph.runtime_inputs()) add(v);
  for (const ir::Node* n : graph.nodes())
    for (const ir::Value* v : n->outputs()) add(v);
  return total;
}

std::vector<size_t> activation_slack(const MemoryPlan& plan) {
  std::vector<size_t> live(plan.node_order.size(), 0);
  for (const PlannedValue& v : plan.values) {
    if (!v.alias_of.empty() || v.role == "workspace") continue;
    const int last = std::min(v.last_step, static_cast<int>(live.size()) - 1);
    for (int s = std::max(v.first_step, 0); s <= last; ++s) live[static_cast<size_t>(s)] += v.size;
  }
  const size_t peak = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
  std::vector<size_t> slack(live.size());
  for (size_t s = 0; s < live.size(); ++s)
    slack[s] = (peak - live[s]) / plan.alignment * plan.alignment;
  return slack;
}

Result<MemoryPlan> replan_with_workspace(const ir::Graph& graph, const MemoryPlan& plan,
                                         std::vector<size_t> node_workspace) {
  XOPT_ASSIGN_OR_RETURN(std::vector<const ir::Node*> order, resolve_node_order(graph, plan));
  PlanOptions po;
  po.alignment = plan.alignment;
  po.io_in_arena = plan.io_in_arena;
  po.batch = plan.batch;
  po.workspace_in_arena = plan.workspace_in_arena;
  po.node_workspace = std::move(node_workspace);
  po.cuda_context_bytes = plan.breakdown.cuda_context;
  po.cuda_context_estimated = plan.breakdown.cuda_context_estimated;
  XOPT_ASSIGN_OR_RETURN(MemoryPlan again, xopt::planner::plan(graph, order, po));
  again.input_naive_bytes = plan.input_naive_bytes;
  again.breakdown.device = plan.breakdown.device;
  again.breakdown.workspace_estimated = plan.breakdown.workspace_estimated;
  return again;
}

Result<MemoryPlan> plan(const ir::Graph& graph, const PlanOptions& options) {
  return plan(graph, graph_order(graph), options);
}

Result<MemoryPlan> plan(const ir::Graph& graph, const std::vector<const ir::Node*>& order,
                        const PlanOptions& options) {
  XOPT_RETURN_IF_ERROR(check_strategies(options.strategies));
  if (options.alignment == 0 || (options.alignment & (options.alignment - 1)) != 0)
    return invalid_argument("planner alignment must be a power of two, not " +
                            std::to_string(options.alignment));
  XOPT_ASSIGN_OR_RETURN(Lifetimes lt,
                        compute_lifetimes(graph, order, {options.alignment, options.io_in_arena}));
  const std::vector<Alias> alias = apply_aliasing(order, lt, {options.views, options.in_place});

  // One buffer per alias root, then (workspace_in_arena) one per node with a workspace, live at
  // its step only.
  std::vector<Buffer> buffers;
  std::vector<size_t> buffer_of(lt.values.size());
  for (size_t i = 0; i < lt.values.size(); ++i)
    if (alias[i].root == static_cast<int>(i)) {
      buffer_of[i] = buffers.size();
      buffers.push_back({lt.values[i].size, lt.values[i].first, lt.values[i].last});
    }
  Workspace ws;
  if (!options.node_workspace.empty()) {
    if (options.node_workspace.size() != order.size())
      return invalid_argument("planner: " + std::to_string(options.node_workspace.size()) +
                              " node workspace sizes for " + std::to_string(order.size()) +
                              " nodes");
    ws.per_node = options.node_workspace;
    for (size_t b : ws.per_node) ws.bytes = std::max(ws.bytes, align_up(b, options.alignment));
  } else if (options.workspace || options.workspace_in_arena) {
    XOPT_ASSIGN_OR_RETURN(ws, plan_workspace(order, options.alignment));
  }
  const size_t first_workspace_buffer = buffers.size();
  std::vector<size_t> workspace_steps;
  if (options.workspace_in_arena)
    for (size_t s = 0; s < ws.per_node.size(); ++s)
      if (ws.per_node[s] > 0) {
        workspace_steps.push_back(s);
        buffers.push_back({align_up(ws.per_node[s], options.alignment), static_cast<int>(s),
                           static_cast<int>(s)});
      }

  MemoryPlan p;
  p.alignment = options.alignment;
  p.io_in_arena = options.io_in_arena;
  p.batch = options.batch;
  p.lower_bound = peak_bytes(buffers);
  for (const ir::Node* n : order) p.node_order.push_back(node_key(*n));
  for (const Lifetime& l : lt.values) p.naive_bytes += l.size;

  auto selected = [&](const std::string& name) {
    return options.strategies.empty() ||
           std::find(options.strategies.begin(), options.strategies.end(), name) !=
               options.strategies.end();
  };
  Assignment best;
  bool have_best = false;
  auto consider = [&](const std::string& name, Assignment a) -> Status {
    Status ok = check_assignment(buffers, a);
    if (!ok.is_ok()) return ok.with_context("planner strategy '" + name + "': ");
    if (a.arena <= p.lower_bound) a.optimal = true;
    p.strategies.push_back({name, a.arena, a.optimal});
    if (!have_best || a.arena < best.arena) {
      best = std::move(a);
      p.strategy = name;
      have_best = true;
    }
    return Status::ok();
  };
  for (const std::string& name : strategy_names()) {
    if (!selected(name)) continue;
    if (name == "greedy-by-size")
      XOPT_RETURN_IF_ERROR(consider(name, assign_greedy_by_size(buffers)));
    if (name == "greedy-by-breadth")
      XOPT_RETURN_IF_ERROR(consider(name, assign_greedy_by_breadth(buffers)));
    if (name == "best-fit-decreasing")
      XOPT_RETURN_IF_ERROR(consider(name, assign_best_fit_decreasing(buffers)));
    if (name == "naive") XOPT_RETURN_IF_ERROR(consider(name, assign_naive(buffers)));
    if (name == "exact") {
      if (buffers.size() > options.exact.max_buffers) {
        if (!have_best && options.strategies.size() == 1)
          return invalid_argument("planner strategy 'exact' searches at most " +
                                  std::to_string(options.exact.max_buffers) +
                                  " buffers; this graph needs " + std::to_string(buffers.size()));
        continue;
      }
      // Run alone, the search starts from greedy-by-size's arena.
      Assignment seed = have_best ? best : assign_greedy_by_size(buffers);
      ExactResult r = assign_exact(buffers, seed.arena, options.exact);
      if (r.assignment) {
        XOPT_RETURN_IF_ERROR(consider(name, *r.assignment));
      } else {
        // Nothing below the seed was found; it is optimal when the search finished.
        seed.optimal = seed.optimal || r.proved;
        if (have_best) {
          best.optimal = seed.optimal;
          p.strategies.push_back({name, best.arena, best.optimal});
        } else {
          XOPT_RETURN_IF_ERROR(consider(name, seed));
        }
      }
    }
  }
  if (!have_best) return invalid_argument("planner: no strategy produced a plan");
  p.arena_bytes = best.arena;
  p.proven_optimal = best.optimal;

  for (size_t i = 0; i < lt.values.size(); ++i) {
    const Lifetime& l = lt.values[i];
    PlannedValue v;
    v.name = l.value->name();
    v.offset = best.offsets[buffer_of[static_cast<size_t>(alias[i].root)]];
    v.size = l.size;
    v.bytes = l.bytes;
    v.first_step = l.first;
    v.last_step = l.last;
    if (alias[i].source >= 0) {
      v.alias_of = lt.values[static_cast<size_t>(alias[i].source)].value->name();
      v.alias_kind = kind_name(alias[i].kind);
    }
    if (l.value->is_graph_input())
      v.role = "input";
    else if (l.value->is_graph_output())
      v.role = "output";
    p.values.push_back(std::move(v));
  }

  for (size_t k = 0; k < workspace_steps.size(); ++k) {
    const size_t s = workspace_steps[k];
    PlannedValue v;
    v.name = workspace_value_name(p.node_order[s]);
    v.offset = best.offsets[first_workspace_buffer + k];
    v.size = buffers[first_workspace_buffer + k].size;
    v.bytes = ws.per_node[s];
    v.first_step = v.last_step = static_cast<int>(s);
    v.role = "workspace";
    p.values.push_back(std::move(v));
  }
  if (options.workspace || options.workspace_in_arena || !options.node_workspace.empty()) {
    p.workspace_in_arena = options.workspace_in_arena;
    p.workspace_bytes = options.workspace_in_arena ? 0 : ws.bytes;
    p.node_workspace = std::move(ws.per_node);
  }
  p.breakdown.cuda_context = options.cuda_context_bytes;
  p.breakdown.cuda_context_estimated = options.cuda_context_estimated;
  p.breakdown.parameters = parameter_bytes(graph, options.alignment);
  p.breakdown.activations = p.arena_bytes;
  p.breakdown.workspace = p.workspace_bytes;
  p.breakdown.io = io_region_bytes(graph, p);
  if (Status st = check_plan(p); !st.is_ok())
    return internal_error("planner produced an invalid plan: " + st.message());
  return p;
}

}  // namespace xopt::planner
