#include "passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/subgraphs.h"

namespace xopt::passes {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string known_names(const PassRegistry& registry) {
  std::string out;
  for (const auto* g : registry.groups()) out += (out.empty() ? "" : ", ") + g->name;
  for (const auto* p : registry.passes()) out += (out.empty() ? "" : ", ") + p->name;
  return out;
}

}  // namespace

struct PassManager::Step {
  std::string name;
  std::unique_ptr<Pass> pass;  // null for a group
  bool fixpoint = false;
  int max_iterations = kDefaultFixpointCap;
  std::vector<std::unique_ptr<Step>> children;
};

struct PassManager::RunState {
  ir::Model& model;
  PassContext& ctx;
  PipelineStats& stats;
  std::map<std::string, int64_t, std::less<>> dump_runs;
  bool shapes_used = false;

  PassStats& pass_stats(const std::string& name) {
    for (auto& p : stats.passes)
      if (p.name == name) return p;
    stats.passes.emplace_back();
    stats.passes.back().name = name;
    return stats.passes.back();
  }
  GroupStats& group_stats(const Step& step) {
    for (auto& g : stats.groups)
      if (g.name == step.name) return g;
    GroupStats g;
    g.name = step.name;
    g.fixpoint = step.fixpoint;
    g.max_iterations = step.max_iterations;
    stats.groups.push_back(g);
    return stats.groups.back();
  }
};

PassManager::PassManager(PassManagerOptions options) : options_(std::move(options)) {}
PassManager::~PassManager() = default;
PassManager::PassManager(PassManager&&) noexcept = default;
PassManager& PassManager::operator=(PassManager&&) noexcept = default;

Status PassManager::add_pipeline(std::string_view spec, const std::vector<std::string>& disabled,
                                 const PassRegistry& registry) {
  auto errors = registry.errors();
  if (!errors.empty()) return internal_error("pass registry: " + errors.front());
  for (const auto& d : disabled)
    if (!registry.contains(d))
      return invalid_argument("--disable-pass: unknown pass '" + d +
                              "' (known: " + known_names(registry) + ")");
  auto is_disabled = [&](const std::string& n) {
    return std::find(disabled.begin(), disabled.end(), n) != disabled.end();
  };

  // Expands a name into a step tree; returns null when disabled.
  std::function<Result<std::unique_ptr<Step>>(const std::string&)> build =
      [&](const std::string& name) -> Result<std::unique_ptr<Step>> {
    if (is_disabled(name)) return std::unique_ptr<Step>();
    auto step = std::make_unique<Step>();
    step->name = name;
    if (const PassInfo* p = registry.find_pass(name)) {
      step->pass = p->create();
      if (step->pass->name() != name)
        return internal_error("pass registered as '" + name + "' calls itself '" +
                              std::string(step->pass->name()) + "'");
      return step;
    }
    const GroupInfo* g = registry.find_group(name);
    if (g == nullptr)
      return invalid_argument("unknown pass '" + name + "' (known: " + known_names(registry) + ")");
    step->fixpoint = g->fixpoint;
    step->max_iterations = std::max(1, g->max_iterations);
    auto members = registry.members(name);
    if (members.empty())
      return invalid_argument("pass group '" + name + "' has no passes in this build of xopt");
    for (const auto& m : members) {
      XOPT_ASSIGN_OR_RETURN(auto child, build(m));
      if (child) step->children.push_back(std::move(child));
    }
    return step;
  };

  std::vector<std::unique_ptr<Step>> added;
  std::string_view rest = spec;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) {
      if (rest.empty() && added.empty() && spec.find(',') == std::string_view::npos) break;
      return invalid_argument("--passes: empty pass name in '" + std::string(spec) + "'");
    }
    XOPT_ASSIGN_OR_RETURN(auto step, build(std::string(item)));
    if (step) added.push_back(std::move(step));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  for (auto& s : added) steps_.push_back(std::move(s));
  return Status::ok();
}

Status PassManager::insert_pass_before(std::string_view anchor, std::string_view name,
                                       const PassRegistry& registry) {
  const PassInfo* p = registry.find_pass(name);
  if (p == nullptr)
    return invalid_argument("unknown pass '" + std::string(name) + "' (known: " +
                            known_names(registry) + ")");
  auto step = std::make_unique<Step>();
  step->name = p->name;
  step->pass = p->create();
  std::function<bool(std::vector<std::unique_ptr<Step>>&)> insert =
      [&](std::vector<std::unique_ptr<Step>>& steps) {
        for (size_t i = 0; i < steps.size(); ++i) {
          if (steps[i]->pass && steps[i]->name == anchor) {
            steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(i), std::move(step));
            return true;
          }
          if (!steps[i]->pass && insert(steps[i]->children)) return true;
        }
        return false;
      };
  if (!insert(steps_)) steps_.push_back(std::move(step));
  return Status::ok();
}

void PassManager::add_pass(std::unique_ptr<Pass> pass) {
  auto step = std::make_unique<Step>();
  step->name = std::string(pass->name());
  step->pass = std::move(pass);
  steps_.push_back(std::move(step));
}

void PassManager::add_group(std::string name, bool fixpoint,
                            std::vector<std::unique_ptr<Pass>> passes, int max_iterations) {
  auto group = std::make_unique<Step>();
  group->name = std::move(name);
  group->fixpoint = fixpoint;
  group->max_iterations = std::max(1, max_iterations);
  for (auto& p : passes) {
    auto step = std::make_unique<Step>();
    step->name = std::string(p->name());
    step->pass = std::move(p);
    group->children.push_back(std::move(step));
  }
  steps_.push_back(std::move(group));
}

namespace {

template <typename StepT, typename F>
void visit_steps(const std::vector<std::unique_ptr<StepT>>& steps, const F& f) {
  for (const auto& s : steps) {
    f(*s);
    visit_steps(s->children, f);
  }
}

}  // namespace

Status PassManager::validate() const {
  std::set<std::string, std::less<>> names;
  visit_steps(steps_, [&](const Step& s) { names.insert(s.name); });
  for (const auto& p : options_.print_after)
    if (!names.count(p))
      return invalid_argument("--print-after: '" + p + "' is not in the pipeline (" + describe() +
                              ")");
  return Status::ok();
}

std::string PassManager::describe() const {
  std::function<std::string(const Step&)> one = [&](const Step& s) {
    if (s.pass) return s.name;
    std::string out = s.name + (s.fixpoint ? "*(" : "(");
    for (size_t i = 0; i < s.children.size(); ++i) out += (i ? ", " : "") + one(*s.children[i]);
    return out + ")";
  };
  std::string out;
  for (size_t i = 0; i < steps_.size(); ++i) out += (i ? ", " : "") + one(*steps_[i]);
  return out;
}

std::vector<std::string> PassManager::pass_names() const {
  std::vector<std::string> out;
  visit_steps(steps_, [&](const Step& s) {
    if (s.pass) out.push_back(s.name);
  });
  return out;
}

bool PassManager::empty() const {
  return pass_names().empty();
}

Result<bool> PassManager::run_pass(Step& step, RunState& st) {
  ir::Graph& graph = *st.model.graph;
  PassStats& ps = st.pass_stats(step.name);
  // Serials only grow and a node never changes graphs, so the nodes a pass adds are those above
  // the largest serial before it, and the rest were there before: no set of 10^6 serials per pass.
  const int64_t nodes_before = static_cast<int64_t>(graph.num_nodes());
  uint64_t last_serial = 0;
  for (const ir::Node* n : graph.nodes()) last_serial = std::max(last_serial, n->serial());

  if (options_.on_pass_start) options_.on_pass_start(step.name, graph.num_nodes());
  st.ctx.set_counter_sink(&ps.counters);
  auto start = Clock::now();
  Result<bool> result = step.pass->run(st.model, st.ctx);
  if (result.is_ok() && runs_in_subgraphs(step.name)) {
    Result<bool> sub = run_in_subgraphs(*step.pass, st.model, st.ctx);
    result = sub.is_ok() ? Result<bool>(*result || *sub) : sub;
  }
  ps.seconds += seconds_since(start);
  st.ctx.set_counter_sink(nullptr);
  ps.runs += 1;
  if (st.ctx.shapes_valid()) st.shapes_used = true;
  if (!result.is_ok())
    return Status(ErrorCode::kPassFailed,
                  "pass '" + step.name + "' failed: " + result.status().message());

  bool changed = *result;
  if (changed) {
    ps.changed += 1;
    st.stats.changed = true;
    int64_t added = 0;
    for (const ir::Node* n : graph.nodes()) added += n->serial() > last_serial;
    ps.nodes_added += added;
    ps.nodes_removed += nodes_before - (static_cast<int64_t>(graph.num_nodes()) - added);
    if (!step.pass->preserves_shapes()) st.ctx.invalidate_shapes();
  }
  if (options_.verify_each) {
    Status v = ir::verify(graph);
    if (!v.is_ok())
      return Status(ErrorCode::kPassFailed,
                    "pass '" + step.name + "' left an invalid graph: " + v.message());
  }
  return changed;
}

Result<bool> PassManager::run_step(Step& step, RunState& st) {
  bool changed = false;
  if (step.pass) {
    XOPT_ASSIGN_OR_RETURN(changed, run_pass(step, st));
  } else {
    GroupStats& gs = st.group_stats(step);
    gs.runs += 1;
    for (int iteration = 1;; ++iteration) {
      bool round_changed = false;
      for (auto& child : step.children) {
        XOPT_ASSIGN_OR_RETURN(bool c, run_step(*child, st));
        round_changed = round_changed || c;
      }
      st.group_stats(step).iterations += 1;
      changed = changed || round_changed;
      if (!step.fixpoint || !round_changed) break;
      if (iteration >= step.max_iterations) {
        st.group_stats(step).converged = false;
        break;
      }
    }
  }
  const auto& pa = options_.print_after;
  if (options_.dump && std::find(pa.begin(), pa.end(), step.name) != pa.end()) {
    int64_t run = ++st.dump_runs[step.name];
    options_.dump(GraphDump{step.name, run, changed,
                            ir::print_graph_text(st.model, options_.dump_max_elements)});
  }
  return changed;
}

Status PassManager::run(ir::Model& model, PassContext& ctx, PipelineStats* stats) {
  PipelineStats local;
  PipelineStats& s = stats != nullptr ? *stats : local;
  s = PipelineStats{};
  s.pipeline = describe();
  s.nodes_before = static_cast<int64_t>(model.graph->num_nodes());
  s.initializers_before = static_cast<int64_t>(model.graph->initializers().size());
  int64_t inference_runs = ctx.shape_inference_runs();
  double inference_seconds = ctx.shape_inference_seconds();
  auto start = Clock::now();
  RunState st{model, ctx, s, {}, ctx.shapes_valid()};

  auto finish = [&]() {
    s.nodes_after = static_cast<int64_t>(model.graph->num_nodes());
    s.initializers_after = static_cast<int64_t>(model.graph->initializers().size());
    s.shape_inference_runs = ctx.shape_inference_runs() - inference_runs;
    s.shape_inference_seconds = ctx.shape_inference_seconds() - inference_seconds;
    s.seconds = seconds_since(start);
  };

  Status status = validate();
  for (auto& step : steps_) {
    if (!status.is_ok()) break;
    auto r = run_step(*step, st);
    if (!r.is_ok()) status = r.status();
  }
  // Values created or rerouted by passes get their types back, so the saved model describes them.
  if (status.is_ok() && st.shapes_used && !ctx.shapes_valid()) {
    Status inferred = ctx.require_shapes(model);
    if (!inferred.is_ok())
      status = Status(ErrorCode::kPassFailed,
                      "shape inference after the passes failed: " + inferred.message());
  }
  finish();
  return status;
}

const PassStats* PipelineStats::find(std::string_view pass) const {
  for (const auto& p : passes)
    if (p.name == pass) return &p;
  return nullptr;
}

nlohmann::json stats_to_json(const PipelineStats& s) {
  nlohmann::json j;
  j["pipeline"] = s.pipeline;
  j["changed"] = s.changed;
  j["nodes_before"] = s.nodes_before;
  j["nodes_after"] = s.nodes_after;
  j["initializers_before"] = s.initializers_before;
  j["initializers_after"] = s.initializers_after;
  j["seconds"] = s.seconds;
  j["shape_inference"] = {{"runs", s.shape_inference_runs}, {"seconds", s.shape_inference_seconds}};
  j["passes"] = nlohmann::json::array();
  for (const auto& p : s.passes) {
    nlohmann::json counters = nlohmann::json::object();
    for (const auto& [k, v] : p.counters) counters[k] = v;
    j["passes"].push_back({{"name", p.name},
                           {"runs", p.runs},
                           {"changed", p.changed},
                           {"nodes_removed", p.nodes_removed},
                           {"nodes_added", p.nodes_added},
                           {"seconds", p.seconds},
                           {"counters", counters}});
  }
  j["groups"] = nlohmann::json::array();
  for (const auto& g : s.groups)
    j["groups"].push_back({{"name", g.name},
                           {"fixpoint", g.fixpoint},
                           {"runs", g.runs},
                           {"iterations", g.iterations},
                           {"max_iterations", g.max_iterations},
                           {"converged", g.converged}});
  return j;
}

std::string stats_table(const PipelineStats& s) {
  size_t width = 4;
  for (const auto& p : s.passes) width = std::max(width, p.name.size());
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-*s %6s %8s %8s %6s %10s  %s\n", static_cast<int>(width), "pass",
                "runs", "changed", "removed", "added", "time(ms)", "counters");
  out += buf;
  for (const auto& p : s.passes) {
    std::string counters;
    for (const auto& [k, v] : p.counters)
      counters += (counters.empty() ? "" : ", ") + k + ": " + std::to_string(v);
    std::snprintf(buf, sizeof buf, "%-*s %6lld %8lld %8lld %6lld %10.2f  ", static_cast<int>(width),
                  p.name.c_str(), static_cast<long long>(p.runs), static_cast<long long>(p.changed),
                  static_cast<long long>(p.nodes_removed), static_cast<long long>(p.nodes_added),
                  p.seconds * 1e3);
    out += buf + counters + "\n";
  }
  for (const auto& g : s.groups) {
    out += "group " + g.name + ": " + std::to_string(g.iterations) +
           (g.iterations == 1 ? " round" : " rounds");
    if (g.fixpoint)
      out += g.converged ? " (fixpoint reached)"
                         : " (stopped at the cap of " + std::to_string(g.max_iterations) +
                               " rounds, still changing)";
    out += "\n";
  }
  std::snprintf(buf, sizeof buf,
                "nodes %lld -> %lld, initializers %lld -> %lld, shape inference %lld runs "
                "(%.2f ms), total %.2f ms\n",
                static_cast<long long>(s.nodes_before), static_cast<long long>(s.nodes_after),
                static_cast<long long>(s.initializers_before),
                static_cast<long long>(s.initializers_after),
                static_cast<long long>(s.shape_inference_runs), s.shape_inference_seconds * 1e3,
                s.seconds * 1e3);
  out += buf;
  return out;
}

}  // namespace xopt::passes
