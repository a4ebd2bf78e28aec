#include "planner/memory_plan.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "planner/intervals.h"

namespace xopt::planner {

const PlannedValue* MemoryPlan::find(const std::string& name) const {
  for (const auto& v : values)
    if (v.name == name) return &v;
  return nullptr;
}

std::string plan_to_json(const MemoryPlan& plan) {
  nlohmann::json j;
  j["format"] = "xopt.memory_plan";
  j["version"] = plan.version;
  j["alignment"] = plan.alignment;
  j["arena_bytes"] = plan.arena_bytes;
  j["lower_bound"] = plan.lower_bound;
  j["naive_bytes"] = plan.naive_bytes;
  if (plan.input_naive_bytes != 0) j["input_naive_bytes"] = plan.input_naive_bytes;
  j["strategy"] = plan.strategy;
  j["io_in_arena"] = plan.io_in_arena;
  j["batch"] = plan.batch;
  j["node_order"] = plan.node_order;
  j["workspace_bytes"] = plan.workspace_bytes;
  if (plan.workspace_in_arena) j["workspace_in_arena"] = true;
  auto& vals = j["values"] = nlohmann::json::array();
  for (const auto& v : plan.values) {
    nlohmann::json e = {{"name", v.name},   {"offset", v.offset},    {"size", v.size},
                        {"bytes", v.bytes}, {"first", v.first_step}, {"last", v.last_step}};
    if (!v.alias_of.empty()) e["alias_of"] = v.alias_of;
    if (!v.alias_kind.empty()) e["alias_kind"] = v.alias_kind;
    if (v.role != "activation") e["role"] = v.role;
    vals.push_back(std::move(e));
  }
  j["node_workspace"] = plan.node_workspace;
  j["proven_optimal"] = plan.proven_optimal;
  auto& strategies = j["strategies"] = nlohmann::json::array();
  for (const auto& s : plan.strategies)
    strategies.push_back(
        {{"name", s.name}, {"arena_bytes", s.arena_bytes}, {"optimal", s.optimal}});
  j["breakdown"] = {{"cuda_context", plan.breakdown.cuda_context},
                    {"cuda_context_estimated", plan.breakdown.cuda_context_estimated},
                    {"parameters", plan.breakdown.parameters},
                    {"activations", plan.breakdown.activations},
                    {"workspace", plan.breakdown.workspace},
                    {"workspace_estimated", plan.breakdown.workspace_estimated},
                    {"io", plan.breakdown.io}};
  if (!plan.breakdown.device.empty()) j["breakdown"]["device"] = plan.breakdown.device;
  if (!plan.input_ranges.empty()) {
    auto& ranges = j["input_ranges"] = nlohmann::json::array();
    for (const InputRange& r : plan.input_ranges) {
      nlohmann::json e = {{"name", r.name}, {"min", r.min}, {"max", r.max}};
      if (!r.opt.empty()) e["opt"] = r.opt;
      ranges.push_back(std::move(e));
    }
    j["min_arena_bytes"] = plan.min_arena_bytes;
  }
  return j.dump();
}

namespace {

// A plan holds integers only; a float where an integer is read converts with undefined behaviour
// when out of range (found by fuzz/fuzz_plan.cc), so a document with any float is refused.
bool has_float(const nlohmann::json& j, int depth = 0) {
  if (j.is_number_float()) return true;
  if (depth > 64) return false;  // the parser's own depth limit applies first
  if (j.is_structured())
    for (const auto& e : j)
      if (has_float(e, depth + 1)) return true;
  return false;
}

}  // namespace

Result<MemoryPlan> plan_from_json(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    if (has_float(j)) return invalid_model("memory plan: a number that is not an integer");
    if (j.value("format", "") != "xopt.memory_plan")
      return invalid_model("memory plan: not an xopt.memory_plan document");
    MemoryPlan p;
    p.version = j.at("version").get<int>();
    if (p.version < MemoryPlan::kOldestReadableVersion || p.version > MemoryPlan::kVersion)
      return unsupported("memory plan: version " + std::to_string(p.version) +
                         " (this xopt reads " + std::to_string(MemoryPlan::kOldestReadableVersion) +
                         " to " + std::to_string(MemoryPlan::kVersion) + ")");
    p.alignment = j.at("alignment").get<size_t>();
    p.arena_bytes = j.at("arena_bytes").get<size_t>();
    p.lower_bound = j.value("lower_bound", size_t{0});
    p.naive_bytes = j.value("naive_bytes", size_t{0});
    p.input_naive_bytes = j.value("input_naive_bytes", size_t{0});
    p.strategy = j.value("strategy", "");
    p.io_in_arena = j.value("io_in_arena", false);
    p.batch = j.value("batch", int64_t{0});
    p.node_order = j.value("node_order", std::vector<std::string>{});
    p.workspace_bytes = j.value("workspace_bytes", size_t{0});
    p.workspace_in_arena = j.value("workspace_in_arena", false);
    for (const auto& e : j.at("values")) {
      PlannedValue v;
      v.name = e.at("name").get<std::string>();
      v.offset = e.at("offset").get<size_t>();
      v.size = e.at("size").get<size_t>();
      v.bytes = e.value("bytes", v.size);
      v.first_step = e.at("first").get<int>();
      v.last_step = e.at("last").get<int>();
      v.alias_of = e.value("alias_of", "");
      v.alias_kind = e.value("alias_kind", "");
      v.role = e.value("role", "activation");
      p.values.push_back(std::move(v));
    }
    p.node_workspace = j.value("node_workspace", std::vector<size_t>{});
    p.proven_optimal = j.value("proven_optimal", false);
    if (j.contains("strategies")) {
      for (const auto& e : j["strategies"])
        p.strategies.push_back({e.at("name").get<std::string>(), e.at("arena_bytes").get<size_t>(),
                                e.value("optimal", false)});
    }
    if (j.contains("breakdown")) {
      const auto& b = j["breakdown"];
      p.breakdown.cuda_context = b.value("cuda_context", size_t{0});
      p.breakdown.cuda_context_estimated = b.value("cuda_context_estimated", true);
      p.breakdown.parameters = b.value("parameters", size_t{0});
      p.breakdown.activations = b.value("activations", size_t{0});
      p.breakdown.workspace = b.value("workspace", size_t{0});
      p.breakdown.workspace_estimated = b.value("workspace_estimated", true);
      p.breakdown.io = b.value("io", size_t{0});
      p.breakdown.device = b.value("device", std::string());
    }
    if (j.contains("input_ranges")) {
      for (const auto& e : j["input_ranges"]) {
        InputRange r;
        r.name = e.at("name").get<std::string>();
        r.min = e.at("min").get<std::vector<int64_t>>();
        r.max = e.at("max").get<std::vector<int64_t>>();
        r.opt = e.value("opt", std::vector<int64_t>{});
        if (r.min.size() != r.max.size() || (!r.opt.empty() && r.opt.size() != r.max.size()))
          return invalid_model("memory plan: the range of input '" + r.name +
                               "' has min, opt and max of different ranks");
        p.input_ranges.push_back(std::move(r));
      }
      p.min_arena_bytes = j.value("min_arena_bytes", size_t{0});
    }
    return p;
  } catch (const std::exception& e) {
    return invalid_model(std::string("memory plan: malformed JSON: ") + e.what());
  }
}

namespace {

// The arena an executor allocates is bounded by its values: no larger than where they end, or
// than all of them side by side (a plan may leave bytes unused, e.g. a value made an alias after
// planning; a lying one cannot ask for more than its values could ever take).
Status check_arena(const MemoryPlan& plan, size_t end) {
  const size_t needed = (end + plan.alignment - 1) / plan.alignment * plan.alignment;
  size_t side_by_side = 0;
  for (const PlannedValue& v : plan.values) {
    if (v.size > std::numeric_limits<size_t>::max() - side_by_side) {
      side_by_side = std::numeric_limits<size_t>::max();
      break;
    }
    side_by_side += v.size;
  }
  if (plan.arena_bytes > std::max(needed, side_by_side))
    return invalid_model("memory plan: arena of " + std::to_string(plan.arena_bytes) +
                         " bytes, but its values end at byte " + std::to_string(end) +
                         " and take " + std::to_string(side_by_side) + " bytes side by side");
  return Status::ok();
}

}  // namespace

Status check_plan(const MemoryPlan& plan) {
  // Values by name, and the root of each alias chain (aliases share their root's bytes by design),
  // each computed once: a chain of in-place ops is as long as the graph (a 10^4-node chain passed
  // the old 1000-step limit and its values were reported as overlapping), and looking names up
  // one by one made the check quadratic.
  std::unordered_map<std::string_view, const PlannedValue*> by_name;
  by_name.reserve(plan.values.size());
  for (const auto& v : plan.values) by_name.emplace(v.name, &v);
  auto find = [&](const std::string& name) -> const PlannedValue* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  std::unordered_map<const PlannedValue*, const PlannedValue*> roots;
  roots.reserve(plan.values.size());
  for (const auto& v : plan.values) {
    std::vector<const PlannedValue*> path;
    const PlannedValue* cur = &v;
    while (!cur->alias_of.empty() && roots.count(cur) == 0) {
      path.push_back(cur);
      if (path.size() > plan.values.size())
        return invalid_model("memory plan: value '" + v.name + "' aliases itself through a cycle");
      const PlannedValue* next = find(cur->alias_of);
      if (next == nullptr)
        return invalid_model("memory plan: value '" + cur->name + "' aliases '" + cur->alias_of +
                             "', which the plan does not hold");
      cur = next;
    }
    auto known = roots.find(cur);
    const PlannedValue* root = known == roots.end() ? cur : known->second;
    for (const PlannedValue* p : path) roots[p] = root;
    roots[cur] = root;
  }
  auto root_of = [&](const PlannedValue& v) { return roots.at(&v); };
  // A plan read from a file may lie: every number is checked before an executor trusts it.
  if (plan.alignment == 0 || (plan.alignment & (plan.alignment - 1)) != 0)
    return invalid_model("memory plan: alignment " + std::to_string(plan.alignment) +
                         " is not a power of two");
  const int64_t steps = static_cast<int64_t>(plan.node_order.size());
  size_t end = 0;
  for (const auto& v : plan.values) {
    // A plan that names no node order (version 1 documents may not) bounds the steps by the
    // values alone; executors then check the steps against the graph's own order.
    if (v.first_step < -1 || v.first_step > v.last_step || (steps > 0 && v.last_step >= steps))
      return invalid_model("memory plan: value '" + v.name + "' is live over steps " +
                           std::to_string(v.first_step) + ".." + std::to_string(v.last_step) +
                           ", outside the plan's steps -1.." + std::to_string(steps - 1));
    if (v.size > plan.arena_bytes || v.offset > plan.arena_bytes - v.size)
      return invalid_model("memory plan: value '" + v.name + "' [" + std::to_string(v.offset) +
                           ", " + std::to_string(v.offset) + " + " + std::to_string(v.size) +
                           ") lies outside the arena of " + std::to_string(plan.arena_bytes) +
                           " bytes");
    if (v.bytes > v.size)
      return invalid_model("memory plan: value '" + v.name + "' needs " + std::to_string(v.bytes) +
                           " bytes but has " + std::to_string(v.size));
    end = std::max(end, v.offset + v.size);
  }
  for (const auto& v : plan.values) {
    if (!v.alias_of.empty()) {
      const PlannedValue* r = find(v.alias_of);
      if (r == nullptr)
        return invalid_model("memory plan: value '" + v.name + "' aliases '" + v.alias_of +
                             "', which the plan does not hold");
      if (v.offset < r->offset || v.bytes > r->size || v.offset - r->offset > r->size - v.bytes)
        return invalid_model("memory plan: value '" + v.name + "' aliases '" + v.alias_of +
                             "' but lies outside its bytes");
    }
  }
  // Each alias group as one rectangle, its values' bytes by their steps (values of size 0 left
  // out). Values of different groups can only clash where their groups' rectangles meet, and for
  // a planner's plan no two do: checking that is a sweep over steps, O(n log n).
  std::unordered_map<const PlannedValue*, size_t> group;
  std::vector<Buffer> hulls;
  std::vector<size_t> hull_offsets;
  group.reserve(roots.size());
  for (const auto& v : plan.values) {
    if (v.size == 0) continue;
    auto [it, fresh] = group.emplace(root_of(v), hulls.size());
    if (fresh) {
      hulls.push_back({v.size, v.first_step, v.last_step});
      hull_offsets.push_back(v.offset);
      continue;
    }
    Buffer& h = hulls[it->second];
    size_t& offset = hull_offsets[it->second];
    const size_t hull_end = std::max(offset + h.size, v.offset + v.size);
    offset = std::min(offset, v.offset);
    h.size = hull_end - offset;
    h.first = std::min(h.first, v.first_step);
    h.last = std::max(h.last, v.last_step);
  }
  if (!any_live_overlap(hulls, hull_offsets)) return check_arena(plan, end);
  // Groups meet: compare the values themselves, sweeping by offset (each value with those that
  // start before it ends), which names the first clashing pair.
  std::vector<const PlannedValue*> order;
  for (const auto& v : plan.values) order.push_back(&v);
  std::sort(order.begin(), order.end(),
            [](const PlannedValue* a, const PlannedValue* b) { return a->offset < b->offset; });
  for (size_t i = 0; i < order.size(); ++i) {
    const PlannedValue* a = order[i];
    if (a->size == 0) continue;
    for (size_t k = i + 1; k < order.size() && order[k]->offset < a->offset + a->size; ++k) {
      const PlannedValue* b = order[k];
      if (b->size == 0) continue;
      const bool live_together = a->first_step <= b->last_step && b->first_step <= a->last_step;
      if (!live_together) continue;
      const PlannedValue* ra = root_of(*a);
      const PlannedValue* rb = root_of(*b);
      if (ra == rb || ra == b || rb == a) continue;
      return invalid_model(
          "memory plan: values '" + a->name + "' and '" + b->name +
          "' are live at the same time (steps " + std::to_string(a->first_step) + ".." +
          std::to_string(a->last_step) + " and " + std::to_string(b->first_step) + ".." +
          std::to_string(b->last_step) + ") and share bytes [" +
          std::to_string(std::max(a->offset, b->offset)) + ", " +
          std::to_string(std::min(a->offset + a->size, b->offset + b->size)) + ")");
    }
  }
  return check_arena(plan, end);
}

}  // namespace xopt::planner
