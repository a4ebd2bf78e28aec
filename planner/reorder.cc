#include "planner/reorder.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "planner/aliasing.h"
#include "planner/intervals.h"

namespace xopt::planner {
namespace {

// The graph reduced to what ordering changes: nodes, their dependencies, and the alias roots each
// node creates and reads.
struct CostModel {
  std::vector<const ir::Node*> nodes;  // graph order
  std::unordered_map<const ir::Node*, int> index;
  std::vector<std::vector<int>> succ;  // distinct consumer nodes
  std::vector<int> preds;              // number of distinct producer nodes
  std::vector<size_t> size;            // per root
  std::vector<int> consumers;          // per root: number of distinct consumer nodes
  std::vector<bool> pinned;            // per root: holds a graph output (live to the end)
  std::vector<std::vector<int>> produces, consumes;  // per node: roots written, roots read
  size_t input_bytes = 0;                            // every input root: the live bytes at step -1
  size_t initial_live = 0;                           // input roots still needed after step -1
};

Result<CostModel> build_model(const ir::Graph& graph, const LifetimeOptions& opt) {
  CostModel m;
  m.nodes = graph_order(graph);
  const size_t n = m.nodes.size();
  for (size_t i = 0; i < n; ++i) m.index[m.nodes[i]] = static_cast<int>(i);
  m.succ.assign(n, {});
  m.preds.assign(n, 0);
  m.produces.assign(n, {});
  m.consumes.assign(n, {});
  std::unordered_map<const ir::Value*, int> root_of;
  std::vector<std::vector<int>> readers;  // per root
  auto add_member = [&](const ir::Value* v, int r) {
    root_of[v] = r;
    if (v->is_graph_output()) m.pinned[static_cast<size_t>(r)] = true;
    for (const ir::Use& u : v->uses())
      readers[static_cast<size_t>(r)].push_back(m.index.at(u.node));
  };
  auto add_root = [&](const ir::Value* v) -> Result<int> {
    XOPT_ASSIGN_OR_RETURN(size_t bytes, value_bytes(*v));
    const int r = static_cast<int>(m.size.size());
    m.size.push_back(align_up(bytes, opt.alignment));
    m.pinned.push_back(false);
    readers.emplace_back();
    add_member(v, r);
    return r;
  };
  std::vector<int> input_roots;
  for (const ir::Value* v : graph.runtime_inputs()) {
    if (!lives_in_arena(*v, opt.io_in_arena)) continue;
    XOPT_ASSIGN_OR_RETURN(int r, add_root(v));
    input_roots.push_back(r);
  }
  for (size_t i = 0; i < n; ++i) {
    const ir::Node& node = *m.nodes[i];
    for (size_t k = 0; k < node.num_outputs(); ++k) {
      const ir::Value* v = node.output(k);
      if (v == nullptr) continue;
      for (const ir::Use& u : v->uses()) m.succ[i].push_back(m.index.at(u.node));
      if (!lives_in_arena(*v, opt.io_in_arena)) continue;
      if (const ir::Value* src = planned_view_source(node, k, opt.io_in_arena)) {
        add_member(v, root_of.at(src));
        continue;
      }
      auto r = add_root(v);
      if (!r.is_ok()) return r.status().with_context(node.describe() + ": ");
      m.produces[i].push_back(*r);
    }
    auto& s = m.succ[i];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (int w : s) ++m.preds[static_cast<size_t>(w)];
  }
  m.consumers.assign(m.size.size(), 0);
  for (size_t r = 0; r < m.size.size(); ++r) {
    auto& c = readers[r];
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    m.consumers[r] = static_cast<int>(c.size());
    for (int w : c) m.consumes[static_cast<size_t>(w)].push_back(static_cast<int>(r));
  }
  for (int r : input_roots) {
    m.input_bytes += m.size[static_cast<size_t>(r)];
    if (m.consumers[static_cast<size_t>(r)] > 0 || m.pinned[static_cast<size_t>(r)])
      m.initial_live += m.size[static_cast<size_t>(r)];
  }
  return m;
}

// Runs nodes one at a time, tracking the live bytes; apply/undo serve the lookahead rollouts.
class Sim {
 public:
  explicit Sim(const CostModel& m)
      : m_(m), remaining_(m.consumers), preds_(m.preds), live_(m.initial_live) {
    for (size_t i = 0; i < m.nodes.size(); ++i)
      if (preds_[i] == 0) ready_.push_back(static_cast<int>(i));
  }

  size_t live() const { return live_; }
  const std::vector<int>& ready() const { return ready_; }

  // Bytes live while node v runs: everything live plus what it writes.
  size_t step_bytes(int v) const {
    size_t s = live_;
    for (int r : m_.produces[static_cast<size_t>(v)]) s += m_.size[static_cast<size_t>(r)];
    return s;
  }
  // Bytes live once node v has run.
  size_t after_bytes(int v) const {
    size_t s = live_;
    for (int r : m_.produces[static_cast<size_t>(v)])
      if (m_.consumers[static_cast<size_t>(r)] > 0 || m_.pinned[static_cast<size_t>(r)])
        s += m_.size[static_cast<size_t>(r)];
    for (int r : m_.consumes[static_cast<size_t>(v)])
      if (remaining_[static_cast<size_t>(r)] == 1 && !m_.pinned[static_cast<size_t>(r)])
        s -= m_.size[static_cast<size_t>(r)];
    return s;
  }

  struct Undo {
    int node;
    size_t live;
    std::vector<int> ready;
  };
  Undo apply(int v) {
    Undo u{v, live_, ready_};
    live_ = after_bytes(v);
    for (int r : m_.consumes[static_cast<size_t>(v)]) --remaining_[static_cast<size_t>(r)];
    ready_.erase(std::find(ready_.begin(), ready_.end(), v));
    for (int w : m_.succ[static_cast<size_t>(v)])
      if (--preds_[static_cast<size_t>(w)] == 0) ready_.push_back(w);
    return u;
  }
  void undo(Undo& u) {
    for (int w : m_.succ[static_cast<size_t>(u.node)]) ++preds_[static_cast<size_t>(w)];
    for (int r : m_.consumes[static_cast<size_t>(u.node)]) ++remaining_[static_cast<size_t>(r)];
    live_ = u.live;
    ready_ = std::move(u.ready);
  }

 private:
  const CostModel& m_;
  std::vector<int> remaining_;
  std::vector<int> preds_;
  std::vector<int> ready_;
  size_t live_;
};

// One-step greedy choice: the ready node with the lowest step bytes, then the lowest bytes after,
// then the earliest in the original order.
int greedy_pick(const Sim& sim) {
  int best = -1;
  std::tuple<size_t, size_t, int> best_key;
  for (int v : sim.ready()) {
    auto key = std::make_tuple(sim.step_bytes(v), sim.after_bytes(v), v);
    if (best < 0 || key < best_key) best = v, best_key = key;
  }
  return best;
}

// The peak of running `first` and then `depth - 1` greedy picks, and the live bytes at the end.
std::pair<size_t, size_t> rollout(Sim& sim, int first, int depth) {
  std::vector<Sim::Undo> undo;
  size_t peak = sim.step_bytes(first);
  undo.push_back(sim.apply(first));
  for (int d = 1; d < depth && !sim.ready().empty(); ++d) {
    const int v = greedy_pick(sim);
    peak = std::max(peak, sim.step_bytes(v));
    undo.push_back(sim.apply(v));
  }
  const size_t end = sim.live();
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) sim.undo(*it);
  return {peak, end};
}

std::vector<int> greedy_order(const CostModel& m, const ReorderOptions& opt) {
  Sim sim(m);
  std::vector<int> order;
  while (!sim.ready().empty()) {
    int pick = -1;
    if (opt.lookahead <= 1 || sim.ready().size() > opt.max_lookahead_ready) {
      pick = greedy_pick(sim);
    } else {
      std::tuple<size_t, size_t, int> best_key;
      const std::vector<int> ready = sim.ready();
      for (int v : ready) {
        const auto [peak, end] = rollout(sim, v, opt.lookahead);
        auto key = std::make_tuple(peak, end, v);
        if (pick < 0 || key < best_key) pick = v, best_key = key;
      }
    }
    sim.apply(pick);
    order.push_back(pick);
  }
  return order;
}

size_t peak_of(const CostModel& m, const std::vector<int>& order) {
  Sim sim(m);
  size_t peak = m.input_bytes;
  for (int v : order) {
    peak = std::max(peak, sim.step_bytes(v));
    sim.apply(v);
  }
  return peak;
}

// Dynamic programming over the sets of executed nodes (each determines the live bytes): the least
// peak to reach each set, layer by layer. Empty when the graph or the state count is too large.
std::vector<int> exact_order(const CostModel& m, const ReorderOptions& opt) {
  const size_t n = m.nodes.size();
  if (n == 0 || n > std::min<size_t>(opt.exact_max_nodes, 63)) return {};
  std::vector<uint64_t> pred_mask(n, 0);
  for (size_t v = 0; v < n; ++v)
    for (int w : m.succ[v]) pred_mask[static_cast<size_t>(w)] |= uint64_t{1} << v;
  // Per root: the producer bit (0 for inputs) and the consumer mask.
  const size_t roots = m.size.size();
  std::vector<uint64_t> producer(roots, 0), readers(roots, 0);
  for (size_t v = 0; v < n; ++v) {
    for (int r : m.produces[v]) producer[static_cast<size_t>(r)] = uint64_t{1} << v;
    for (int r : m.consumes[v]) readers[static_cast<size_t>(r)] |= uint64_t{1} << v;
  }
  auto live_after = [&](uint64_t done) {
    size_t s = 0;
    for (size_t r = 0; r < roots; ++r) {
      const bool written = producer[r] == 0 || (done & producer[r]) != 0;
      if (written && (m.pinned[r] || (readers[r] & ~done) != 0)) s += m.size[r];
    }
    return s;
  };
  struct State {
    size_t peak;
    uint64_t parent;
    int last;
  };
  std::unordered_map<uint64_t, State> states;
  states[0] = {m.input_bytes, 0, -1};
  std::vector<uint64_t> layer = {0};
  for (size_t depth = 0; depth < n; ++depth) {
    std::vector<uint64_t> next;
    for (uint64_t done : layer) {
      const size_t base = live_after(done);
      const size_t peak = states.at(done).peak;
      for (size_t v = 0; v < n; ++v) {
        const uint64_t bit = uint64_t{1} << v;
        if ((done & bit) != 0 || (pred_mask[v] & ~done) != 0) continue;
        size_t step = base;
        for (int r : m.produces[v]) step += m.size[static_cast<size_t>(r)];
        const State s{std::max(peak, step), done, static_cast<int>(v)};
        auto [it, fresh] = states.emplace(done | bit, s);
        if (fresh)
          next.push_back(done | bit);
        else if (s.peak < it->second.peak)
          it->second = s;
      }
      if (states.size() > opt.exact_max_states) return {};
    }
    layer = std::move(next);
  }
  std::vector<int> order;
  for (uint64_t s = (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1); s != 0;) {
    const State& st = states.at(s);
    order.push_back(st.last);
    s = st.parent;
  }
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<int> identity(size_t n) {
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  return order;
}

}  // namespace

Result<size_t> order_peak_bytes(const ir::Graph& graph, const std::vector<const ir::Node*>& order,
                                const LifetimeOptions& lifetimes) {
  XOPT_ASSIGN_OR_RETURN(CostModel m, build_model(graph, lifetimes));
  // Validates the order the way the planner does.
  XOPT_RETURN_IF_ERROR(compute_lifetimes(graph, order, lifetimes).status());
  std::vector<int> idx;
  for (const ir::Node* n : order) idx.push_back(m.index.at(n));
  return peak_of(m, idx);
}

Result<Reordering> memory_aware_order(const ir::Graph& graph, const LifetimeOptions& lifetimes,
                                      const ReorderOptions& options) {
  XOPT_ASSIGN_OR_RETURN(CostModel m, build_model(graph, lifetimes));
  Reordering r;
  std::vector<int> best = identity(m.nodes.size());
  r.original_peak_bytes = r.peak_bytes = peak_of(m, best);
  r.method = "original";
  auto consider = [&](std::vector<int> order, const char* method) {
    if (order.size() != m.nodes.size()) return;
    const size_t peak = peak_of(m, order);
    if (peak < r.peak_bytes) r.peak_bytes = peak, best = std::move(order), r.method = method;
  };
  std::vector<int> exact = exact_order(m, options);
  if (!exact.empty()) {
    consider(std::move(exact), "exact");
    r.optimal = true;  // the original order, when kept, ties the optimum
  } else {
    consider(greedy_order(m, options), "greedy");
    if (options.lookahead > 1) {
      ReorderOptions one_step = options;
      one_step.lookahead = 1;
      consider(greedy_order(m, one_step), "greedy");
    }
  }
  for (int i : best) r.order.push_back(m.nodes[static_cast<size_t>(i)]);
  return r;
}

Result<MemoryPlan> plan_with_reorder(const ir::Graph& graph, const PlanOptions& options,
                                     const ReorderOptions& reorder) {
  XOPT_ASSIGN_OR_RETURN(MemoryPlan original, plan(graph, graph_order(graph), options));
  XOPT_ASSIGN_OR_RETURN(
      Reordering r, memory_aware_order(graph, {options.alignment, options.io_in_arena}, reorder));
  if (r.method == "original") return original;
  XOPT_ASSIGN_OR_RETURN(MemoryPlan reordered, plan(graph, r.order, options));
  return reordered.arena_bytes < original.arena_bytes ? reordered : original;
}

}  // namespace xopt::planner
