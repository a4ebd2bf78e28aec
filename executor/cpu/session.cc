#include "executor/cpu/session.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>

#include "executor/cpu/allocator.h"
#include "executor/cpu/broadcast.h"
#include "executor/cpu/kernel.h"
#include "executor/cpu/parallel.h"
#include "ir/value_type.h"
#include "planner/planner.h"
#include "planner/shape_range.h"

namespace xopt::exec {

namespace {

constexpr int kForever = std::numeric_limits<int>::max();

std::string op_label(const ir::Node& n) {
  return n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type();
}

ir::Tensor deep_copy(const ir::Tensor& t) {
  if (t.dtype() == ir::DType::kString) return ir::Tensor::of_strings(t.dims(), t.strings());
  ir::Tensor c(t.dtype(), t.dims());
  if (t.nbytes() > 0) std::memcpy(c.mutable_raw_data(), t.raw_data(), t.nbytes());
  return c;
}

std::string shape_string(const ir::Shape& s) {
  return s.to_string();
}

// Checks the given inputs against the graph's declared inputs.
Status check_inputs(const ir::Graph& g, const std::map<std::string, ir::Tensor>& inputs,
                    const std::map<std::string, ExecValue>& value_inputs) {
  for (const auto& [name, t] : inputs) {
    const ir::Value* v = g.find_value(name);
    if (v == nullptr || !v->is_graph_input()) {
      std::string names;
      for (const ir::Value* in : g.runtime_inputs())
        names += (names.empty() ? "" : ", ") + in->name();
      return invalid_argument("'" + name + "' is not an input of the graph (inputs: " + names +
                              ")");
    }
  }
  std::map<std::string, int64_t> symbols;  // symbolic dim -> size bound by the first input using it
  for (const ir::Value* v : g.inputs()) {
    if (value_inputs.count(v->name()) != 0) continue;  // checked by split_inputs
    auto it = inputs.find(v->name());
    if (it == inputs.end()) {
      if (v->is_initializer()) continue;  // an overridable default (IR < 4)
      return invalid_argument("input '" + v->name() + "' is not given (declared " +
                              std::string(ir::dtype_name(v->dtype())) + " " +
                              shape_string(v->shape()) + ")");
    }
    const ir::Tensor& t = it->second;
    if (v->dtype() != ir::DType::kUndefined && t.dtype() != v->dtype())
      return invalid_argument("input '" + v->name() + "' is " +
                              std::string(ir::dtype_name(t.dtype())) + " but the graph declares " +
                              std::string(ir::dtype_name(v->dtype())));
    const ir::Shape& s = v->shape();
    if (!s.has_rank()) continue;
    auto mismatch = [&](const std::string& why) {
      return invalid_argument("input '" + v->name() + "' has shape " + ir::dims_string(t.dims()) +
                              " but the graph declares " + shape_string(s) + " (" + why + ")");
    };
    if (s.rank() != t.rank())
      return mismatch("rank " + std::to_string(t.rank()) + " instead of " +
                      std::to_string(s.rank()));
    for (size_t i = 0; i < s.rank(); ++i) {
      const ir::Dim& d = s[i];
      int64_t got = t.dims()[i];
      if (d.is_known() && d.value != got)
        return mismatch("dim " + std::to_string(i) + " is " + std::to_string(got) + ", not " +
                        std::to_string(d.value));
      if (d.is_symbolic()) {
        auto [sit, fresh] = symbols.emplace(d.symbol, got);
        if (!fresh && sit->second != got)
          return mismatch("dim " + std::to_string(i) + " '" + d.symbol + "' is " +
                          std::to_string(got) + " but another input bound it to " +
                          std::to_string(sit->second));
      }
    }
  }
  return Status::ok();
}

// Sorts the given inputs into tensors and other values, checking each against the kind the graph
// declares: an optional input may be given its content (then present), an undeclared one (a
// subgraph's outer-scope read) takes any kind.
Status split_inputs(const ir::Graph& g, const std::map<std::string, ExecValue>& given,
                    std::map<std::string, ir::Tensor>& tensors,
                    std::map<std::string, ExecValue>& values) {
  for (const auto& [name, ev] : given) {
    const ir::Value* v = g.find_value(name);
    ir::TypeKind declared = v != nullptr ? ir::type_kind(*v) : ir::TypeKind::kTensor;
    const bool untyped = v != nullptr && v->is_tensor() && v->dtype() == ir::DType::kUndefined &&
                         !v->shape().has_rank();
    ExecValue value = ev;
    if (declared == ir::TypeKind::kOptional && !value.is_optional())
      value = ExecValue::some(std::move(value));
    bool fits = untyped || (declared == ir::TypeKind::kTensor && value.is_tensor()) ||
                (declared == ir::TypeKind::kSequence && value.is_sequence()) ||
                (declared == ir::TypeKind::kOptional && value.is_optional());
    if (fits && !untyped && declared == ir::TypeKind::kOptional && value.has_element()) {
      // The content must be of the kind the optional declares (a tensor, or a sequence).
      const ir::TypeKind elem = ir::type_kind(ir::element_type(v->type()));
      fits = (elem == ir::TypeKind::kTensor) == value.element().is_tensor() &&
             (elem == ir::TypeKind::kSequence) == value.element().is_sequence();
    }
    if (v != nullptr && v->is_graph_input() && !fits)
      return invalid_argument("input '" + name + "' is a " + value.describe() +
                              " but the graph declares " + ir::type_to_string(*v));
    if (value.is_tensor())
      tensors.emplace(name, std::move(value.mutable_tensor()));
    else
      values.emplace(name, std::move(value));
  }
  return Status::ok();
}

// Every value a node reads: its inputs and the outer-scope values its subgraphs read.
template <typename F>
void for_each_read(const ir::Node& n, F&& f) {
  for (const ir::Value* v : n.inputs())
    if (v != nullptr) f(v);
  for (const ir::Value* v : n.implicit_inputs())
    if (v != nullptr) f(v);
}

}  // namespace

Result<std::vector<const ir::Node*>> execution_order(const ir::Graph& graph,
                                                     const planner::MemoryPlan* plan) {
  std::vector<const ir::Node*> order;
  for (const ir::Node* n : graph.nodes()) order.push_back(n);
  if (plan == nullptr || plan->node_order.empty()) return order;
  // The graph's own order, named the way plans name nodes (planner::node_key): accepted even when
  // keys repeat, since positions then say which node is meant.
  bool same = plan->node_order.size() == order.size();
  for (size_t i = 0; same && i < order.size(); ++i)
    same = plan->node_order[i] == planner::node_key(*order[i]);
  if (same) return order;
  return planner::resolve_node_order(graph, *plan);
}

Result<std::vector<ir::Tensor>> run_model(const ir::Model& model,
                                          const std::map<std::string, ir::Tensor>& inputs,
                                          const RunOptions& options) {
  std::map<std::string, ExecValue> values;
  for (const auto& [name, t] : inputs) values.emplace(name, ExecValue::of_tensor(t));
  XOPT_ASSIGN_OR_RETURN(std::vector<ExecValue> outs, run_model_values(model, values, options));
  std::vector<ir::Tensor> results;
  results.reserve(outs.size());
  const auto& g_outs = model.graph->outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].is_tensor())
      return unsupported("graph output '" + g_outs[i]->name() + "' is a " +
                         kind_name(outs[i].kind()) +
                         ", not a tensor (run it with run_model_values)");
    results.push_back(std::move(outs[i].mutable_tensor()));
  }
  return results;
}

Result<std::vector<ExecValue>> run_model_values(const ir::Model& model,
                                                const std::map<std::string, ExecValue>& given,
                                                const RunOptions& options) {
  const ir::Graph& g = *model.graph;
  // Tensors go where they always went; sequences and optionals live in their own map, outside any
  // memory plan.
  std::map<std::string, ir::Tensor> inputs;
  std::map<std::string, ExecValue> value_inputs;
  XOPT_RETURN_IF_ERROR(split_inputs(g, given, inputs, value_inputs));
  XOPT_RETURN_IF_ERROR(check_inputs(g, inputs, value_inputs));
  if (options.plan != nullptr)  // a plan made for a range of shapes holds the inputs inside it
    for (const auto& [name, t] : inputs)
      XOPT_RETURN_IF_ERROR(planner::check_in_range(*options.plan, name, t.dims()));
  XOPT_ASSIGN_OR_RETURN(std::vector<const ir::Node*> order, execution_order(g, options.plan));
  const ScopedIntraOpThreads threads(options.threads > 0 ? options.threads
                                                         : default_intra_op_threads());

  // Resolve every kernel before running anything.
  std::vector<const KernelDef*> kernels;
  for (const ir::Node* n : order) {
    const KernelDef* k = KernelRegistry::global().find(n->domain(), n->op_type(), n->opset());
    if (k == nullptr)
      return unsupported(n->describe() + ": no CPU kernel for " + op_label(*n) + " at opset " +
                         std::to_string(n->opset()));
    kernels.push_back(k);
  }

  // Step of the last read of every value; graph outputs live to the end.
  std::unordered_map<const ir::Value*, int> last_use;
  for (size_t s = 0; s < order.size(); ++s)
    for_each_read(*order[s], [&](const ir::Value* v) { last_use[v] = static_cast<int>(s); });
  for (const ir::Value* v : g.outputs()) last_use[v] = kForever;

  RunStats stats;
  SimpleAllocator simple;
  std::unique_ptr<ArenaAllocator> arena;
  OutputAllocator* allocator = &simple;
  if (options.plan != nullptr) {
    XOPT_ASSIGN_OR_RETURN(arena, ArenaAllocator::create(*options.plan));
    allocator = arena.get();
    stats.arena_bytes = arena->arena_bytes();
  }

  std::unordered_map<const ir::Value*, ir::Tensor> env;
  std::unordered_map<const ir::Value*, ExecValue> venv;  // sequences and optionals
  for (const auto& [name, ev] : value_inputs) venv[g.find_value(name)] = ev;
  for (const auto& [name, t] : inputs) {
    const ir::Value* v = g.find_value(name);
    if (arena != nullptr && arena->find(name) != nullptr) {
      XOPT_ASSIGN_OR_RETURN(env[v], arena->place(*v, t));
    } else {
      env[v] = t;
    }
  }
  auto lookup = [&](const ir::Value* v) -> const ir::Tensor* {
    auto it = env.find(v);
    if (it != env.end()) return &it->second;
    return v->initializer();
  };

  // Live activation bytes, counted once per buffer: a forwarded output shares its input's storage.
  size_t live_bytes = 0;
  std::unordered_map<const void*, int> buffer_refs;
  auto buffer_of = [](const ir::Value* v, const ir::Tensor& t) -> const void* {
    return t.storage() ? static_cast<const void*>(t.storage().get()) : v;
  };
  for (size_t s = 0; s < order.size(); ++s) {
    const ir::Node& n = *order[s];
    const int step = static_cast<int>(s);
    std::vector<const ir::Tensor*> ins;
    std::vector<const ExecValue*> value_ins;
    ins.reserve(n.num_inputs());
    for (const ir::Value* v : n.inputs()) {
      if (v == nullptr) {
        ins.push_back(nullptr);
        continue;
      }
      if (auto vit = venv.find(v); vit != venv.end()) {
        value_ins.resize(n.num_inputs(), nullptr);
        value_ins[ins.size()] = &vit->second;
        ins.push_back(nullptr);
        continue;
      }
      const ir::Tensor* t = lookup(v);
      if (t == nullptr)
        return invalid_model(n.describe() + ": input '" + v->name() +
                             "' has not been computed (no producer runs before this node)");
      if (arena != nullptr && env.count(v) != 0) {
        const planner::PlannedValue* pv = arena->find(v->name());
        if (pv != nullptr && (step > pv->last_step || step < pv->first_step))
          return invalid_argument(
              "memory plan: value '" + v->name() + "' is read at step " + std::to_string(step) +
              " by " + n.describe() + " but is planned live only over steps " +
              std::to_string(pv->first_step) + ".." + std::to_string(pv->last_step));
      }
      ins.push_back(t);
    }

    std::vector<ir::Tensor> outs(n.num_outputs());
    KernelContext ctx(n, std::move(ins), &outs, allocator);
    if (!value_ins.empty()) ctx.set_input_values(std::move(value_ins));
    if (!n.implicit_inputs().empty()) {
      std::vector<const ir::Tensor*> outer;
      std::vector<const ExecValue*> outer_values;
      for (const ir::Value* v : n.implicit_inputs()) {
        auto vit = venv.find(v);
        outer_values.push_back(vit != venv.end() ? &vit->second : nullptr);
        outer.push_back(vit != venv.end() ? nullptr : lookup(v));
      }
      ctx.set_implicit_inputs(std::move(outer));
      ctx.set_implicit_values(std::move(outer_values));
    }
    Status st = kernels[s]->fn(ctx);
    if (!st.is_ok()) {
      if (st.message().find(n.describe()) == std::string::npos)
        st = st.with_context(n.describe() + ": ");
      return st;
    }
    ++stats.nodes_run;

    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const ir::Value* v = n.output(i);
      if (v == nullptr) continue;
      if (auto vit = ctx.value_outputs().find(i); vit != ctx.value_outputs().end()) {
        if (v->has_uses() || v->is_graph_output()) venv[v] = std::move(vit->second);
        continue;
      }
      if (i >= outs.size() || outs[i].empty())
        return internal_error(n.describe() + ": the kernel produced no output " +
                              std::to_string(i) + " ('" + v->name() + "')");
      ir::Tensor& t = outs[i];
      if (arena != nullptr) {
        const planner::PlannedValue* pv = arena->find(v->name());
        if (pv != nullptr) {
          if (step < pv->first_step || step > pv->last_step)
            return invalid_argument("memory plan: value '" + v->name() + "' is produced at step " +
                                    std::to_string(step) + " by " + n.describe() +
                                    " but is planned live only over steps " +
                                    std::to_string(pv->first_step) + ".." +
                                    std::to_string(pv->last_step));
          if (!arena->is_in_slot(t, *pv)) {
            // The kernel made its output share another tensor's bytes (a view) instead of writing
            // the slot it was given: put the bytes where the plan says they live.
            XOPT_ASSIGN_OR_RETURN(t, arena->place(*v, t));
            ++stats.outputs_copied_into_arena;
          }
        } else if (!ArenaAllocator::may_be_unplanned(*v, options.plan->io_in_arena)) {
          if (t.dtype() != ir::DType::kString)
            return invalid_argument("memory plan: value '" + v->name() + "' (produced by " +
                                    n.describe() + ") has no place in the plan");
        }
      }
      if (options.on_output) options.on_output(n, *v, t);
      if (!v->has_uses() && !v->is_graph_output()) continue;  // dead output: drop now
      if (++buffer_refs[buffer_of(v, t)] == 1) live_bytes += t.nbytes();
      env[v] = std::move(t);
    }
    stats.peak_activation_bytes = std::max(stats.peak_activation_bytes, live_bytes);

    // Free what this node read for the last time (never graph inputs given by the caller twice
    // over: the caller keeps its own reference).
    for_each_read(n, [&](const ir::Value* v) {
      auto lu = last_use.find(v);
      if (lu == last_use.end() || lu->second != step) return;
      venv.erase(v);
      auto it = env.find(v);
      if (it == env.end()) return;
      if (v->producer() != nullptr) {
        auto ref = buffer_refs.find(buffer_of(v, it->second));
        if (ref != buffer_refs.end() && --ref->second == 0) {
          live_bytes -= std::min(live_bytes, it->second.nbytes());
          buffer_refs.erase(ref);
        }
      }
      env.erase(it);
    });
  }

  std::vector<ExecValue> results;
  for (const ir::Value* v : g.outputs()) {
    if (auto vit = venv.find(v); vit != venv.end()) {
      results.push_back(vit->second);
      continue;
    }
    const ir::Tensor* t = lookup(v);
    if (t == nullptr) return invalid_model("graph output '" + v->name() + "' is never computed");
    results.push_back(ExecValue::of_tensor(arena != nullptr ? deep_copy(*t) : *t));
  }
  if (options.stats != nullptr) *options.stats = stats;
  return results;
}

Result<planner::MemoryPlan> sequential_plan(const ir::Model& model,
                                            const std::map<std::string, ir::Tensor>& inputs,
                                            bool io_in_arena, size_t alignment) {
  const ir::Graph& g = *model.graph;
  XOPT_ASSIGN_OR_RETURN(std::vector<const ir::Node*> order, execution_order(g, nullptr));
  std::unordered_map<const ir::Value*, size_t> bytes;
  std::unordered_map<const ir::Node*, int> step_of;
  for (size_t s = 0; s < order.size(); ++s) step_of[order[s]] = static_cast<int>(s);
  RunOptions ro;
  ro.on_output = [&](const ir::Node&, const ir::Value& v, const ir::Tensor& t) {
    if (t.dtype() != ir::DType::kString) bytes[&v] = t.nbytes();
  };
  XOPT_RETURN_IF_ERROR(run_model(model, inputs, ro).status());

  const int last = static_cast<int>(order.size()) - 1;
  planner::MemoryPlan plan;
  plan.alignment = alignment;
  plan.strategy = "sequential";
  plan.io_in_arena = io_in_arena;
  for (const ir::Node* n : order) plan.node_order.push_back(planner::node_key(*n));
  auto round_up = [&](size_t b) { return (b + alignment - 1) / alignment * alignment; };
  auto add = [&](const ir::Value* v, size_t nbytes, int first) {
    int lu = -1;
    for (const ir::Use& u : v->uses()) {
      auto it = step_of.find(u.node);
      if (it != step_of.end()) lu = std::max(lu, it->second);
    }
    if (v->is_graph_output()) lu = last;
    planner::PlannedValue pv;
    pv.name = v->name();
    pv.offset = plan.arena_bytes;
    pv.bytes = nbytes;
    pv.size = round_up(nbytes);
    pv.first_step = first;
    pv.last_step = std::max(lu, first);
    plan.arena_bytes += pv.size;
    plan.values.push_back(std::move(pv));
  };
  if (io_in_arena)
    for (const ir::Value* v : g.runtime_inputs()) {
      auto it = inputs.find(v->name());
      if (it != inputs.end() && it->second.dtype() != ir::DType::kString)
        add(v, it->second.nbytes(), -1);
    }
  for (const ir::Node* n : order)
    for (const ir::Value* v : n->outputs()) {
      if (v == nullptr || bytes.count(v) == 0) continue;
      if (!v->has_uses() && !v->is_graph_output()) continue;
      if (v->is_graph_output() && !io_in_arena) continue;
      add(v, bytes[v], step_of[n]);
    }
  plan.naive_bytes = plan.arena_bytes;
  for (int s = -1; s <= last; ++s) {
    size_t live = 0;
    for (const auto& pv : plan.values)
      if (pv.first_step <= s && s <= pv.last_step) live += pv.bytes;
    plan.lower_bound = std::max(plan.lower_bound, live);
  }
  plan.breakdown.activations = plan.arena_bytes;
  return plan;
}

}  // namespace xopt::exec
