#include "planner/shared_arena.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "planner/report.h"

namespace xopt::planner {

Result<SharedArena> share_arena(const std::vector<std::string>& members,
                                const std::vector<const MemoryPlan*>& plans) {
  if (members.empty() || members.size() != plans.size())
    return invalid_argument("shared arena: needs one plan per member and at least one member");
  std::set<std::string> seen;
  SharedArena s;
  s.alignment = plans.front()->alignment;
  for (size_t i = 0; i < members.size(); ++i) {
    if (!seen.insert(members[i]).second)
      return invalid_argument("shared arena: model '" + members[i] + "' is given twice");
    const MemoryPlan& p = *plans[i];
    if (p.alignment != s.alignment)
      return invalid_argument("shared arena: '" + members[i] + "' is planned at alignment " +
                              std::to_string(p.alignment) + ", '" + members.front() + "' at " +
                              std::to_string(s.alignment));
    s.arena_bytes = std::max(s.arena_bytes, p.arena_bytes);
    s.workspace_bytes = std::max(s.workspace_bytes, p.workspace_bytes);
  }
  s.members = members;
  s.id = shared_arena_id(plans);
  return s;
}

namespace {

// FNV-1a, 64 bits: stable across builds and machines (std::hash is neither).
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  }
  void number(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      const auto b = static_cast<unsigned char>(v >> (8 * i));
      bytes(&b, 1);
    }
  }
  void text(const std::string& s) {
    number(s.size());
    bytes(s.data(), s.size());
  }
};

}  // namespace

std::string shared_arena_id(const std::vector<const MemoryPlan*>& plans) {
  Fnv f;
  f.number(plans.size());
  for (const MemoryPlan* p : plans) {
    f.number(p->alignment);
    f.number(p->arena_bytes);
    f.number(p->workspace_bytes);
    f.number(p->breakdown.parameters);
    f.number(p->breakdown.io);
    f.number(p->node_order.size());
    for (const std::string& n : p->node_order) f.text(n);
    f.number(p->values.size());
    for (const PlannedValue& v : p->values) {
      f.text(v.name);
      f.number(v.offset);
      f.number(v.size);
      f.number(static_cast<uint64_t>(static_cast<int64_t>(v.first_step)));
      f.number(static_cast<uint64_t>(static_cast<int64_t>(v.last_step)));
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "shared-%016llx", static_cast<unsigned long long>(f.h));
  return buf;
}

SharedArenaFigures shared_arena_figures_of(const SharedArena& shared,
                                           const std::vector<MemoryBreakdown>& members) {
  SharedArenaFigures f;
  f.members = members;
  MemoryBreakdown& g = f.shared;
  MemoryBreakdown& sep = f.separate;
  g.cuda_context_estimated = sep.cuda_context_estimated = false;
  g.workspace_estimated = sep.workspace_estimated = false;
  g.workspace_in_arena = sep.workspace_in_arena = !members.empty();
  for (const MemoryBreakdown& m : members) {
    f.member_totals.push_back(m.total());
    // Each member's own regions: in the group as they are alone.
    for (MemoryBreakdown* b : {&g, &sep}) {
      b->parameters += m.parameters;
      b->staging += m.staging;
      b->io += m.io;
      b->offloaded += m.offloaded;
      b->offloaded_weights += m.offloaded_weights;
      b->has_offload = b->has_offload || m.has_offload;
      b->cuda_context_estimated = b->cuda_context_estimated || m.cuda_context_estimated;
      b->workspace_estimated = b->workspace_estimated || m.workspace_estimated;
      b->workspace_in_arena = b->workspace_in_arena && m.workspace_in_arena;
      b->largest_node_workspace = std::max(b->largest_node_workspace, m.largest_node_workspace);
      if (b->device.empty()) b->device = m.device;
    }
    // Alone, each has its own arena, workspace and context; the group has one of each.
    sep.activations += m.activations;
    sep.workspace += m.workspace;
    sep.cuda_context += m.cuda_context;
    g.cuda_context = std::max(g.cuda_context, m.cuda_context);
  }
  g.activations = shared.arena_bytes;
  g.workspace = shared.workspace_bytes;
  f.parameters = g.parameters;
  f.context = g.cuda_context;
  f.shared_total = g.total();
  f.separate_total = sep.total();
  return f;
}

SharedArenaFigures shared_arena_figures(const SharedArena& shared,
                                        const std::vector<const MemoryPlan*>& plans) {
  std::vector<MemoryBreakdown> members;
  members.reserve(plans.size());
  for (const MemoryPlan* p : plans) members.push_back(memory_breakdown(*p));
  return shared_arena_figures_of(shared, members);
}

std::string shared_arena_text(const SharedArena& shared, const SharedArenaFigures& f) {
  size_t width = 24;
  for (const std::string& m : shared.members) width = std::max(width, m.size());
  const int w = static_cast<int>(width);
  std::string out;
  char buf[512];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  add("shared arena %s: %zu models that run one at a time on one GPU\n", shared.id.c_str(),
      shared.members.size());
  add("  %-*s %13s %13s %13s %13s %13s %13s %14s\n", w, "model (device bytes)", "parameters",
      "staging", "arena", "workspace", "I/O", "context", "total");
  auto row = [&](const std::string& name, const MemoryBreakdown& b) {
    add("  %-*s %13zu %13zu %13zu %13zu %13zu %13zu %14zu\n", w, name.c_str(), b.parameters,
        b.staging, b.activations, b.workspace, b.io, b.cuda_context, b.total());
  };
  for (size_t i = 0; i < shared.members.size() && i < f.members.size(); ++i)
    row(shared.members[i], f.members[i]);
  row("separate (summed)", f.separate);
  row("shared (one arena)", f.shared);
  add("  shared total   %14zu  %12s  (every member's parameters, staging and I/O + the largest "
      "arena and workspace + one context of %s)\n",
      f.shared_total, human_bytes(f.shared_total).c_str(), human_bytes(f.context).c_str());
  add("  separate total %14zu  %12s  (each model with its own arena, workspace and context)\n",
      f.separate_total, human_bytes(f.separate_total).c_str());
  if (f.shared.has_offload)
    add("  host (pinned)  %14zu  %12s  (%zu offloaded weights, every member's)\n",
        f.shared.offloaded, human_bytes(f.shared.offloaded).c_str(), f.shared.offloaded_weights);
  return out;
}

std::string shared_arena_report_json(const SharedArena& shared, const SharedArenaFigures& f,
                                     const std::vector<std::string>& outputs) {
  nlohmann::json j;
  j["format"] = "xopt.shared_arena_report";
  // Version 2: every figure a breakdown (planner/memory_breakdown.h), members named as given.
  j["version"] = 2;
  j["group"] = nlohmann::json::parse(shared_arena_to_json(shared));
  j["members"] = nlohmann::json::array();
  for (size_t i = 0; i < shared.members.size() && i < f.members.size(); ++i) {
    nlohmann::json m = {{"name", shared.members[i]},
                        {"breakdown", nlohmann::json::parse(breakdown_json(f.members[i]))},
                        {"total_alone", f.members[i].total()}};
    if (i < outputs.size()) m["output"] = outputs[i];
    j["members"].push_back(std::move(m));
  }
  j["shared"] = {{"breakdown", nlohmann::json::parse(breakdown_json(f.shared))}};
  j["separate"] = {{"breakdown", nlohmann::json::parse(breakdown_json(f.separate))}};
  j["shared_total"] = f.shared_total;
  j["separate_total"] = f.separate_total;
  j["parameters"] = f.parameters;
  j["context"] = f.context;
  return j.dump(2);
}

std::string shared_arena_to_json(const SharedArena& s) {
  nlohmann::json j = {{"format", "xopt.shared_arena"},
                      {"version", 1},
                      {"id", s.id},
                      {"alignment", s.alignment},
                      {"arena_bytes", s.arena_bytes},
                      {"workspace_bytes", s.workspace_bytes},
                      {"members", s.members}};
  if (!s.member.empty()) j["member"] = s.member;
  return j.dump();
}

Result<SharedArena> shared_arena_from_json(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    if (j.value("format", "") != "xopt.shared_arena")
      return invalid_model("shared arena: not an xopt.shared_arena document");
    if (j.value("version", 0) != 1)
      return unsupported("shared arena: version " + std::to_string(j.value("version", 0)) +
                         " (this xopt reads 1)");
    SharedArena s;
    s.id = j.at("id").get<std::string>();
    s.alignment = j.at("alignment").get<size_t>();
    s.arena_bytes = j.at("arena_bytes").get<size_t>();
    s.workspace_bytes = j.at("workspace_bytes").get<size_t>();
    s.members = j.at("members").get<std::vector<std::string>>();
    if (s.members.empty()) return invalid_model("shared arena: no members");
    s.member = j.value("member", std::string());
    if (!s.member.empty() &&
        std::find(s.members.begin(), s.members.end(), s.member) == s.members.end())
      return invalid_model("shared arena: member '" + s.member + "' is not one of the group's");
    return s;
  } catch (const nlohmann::json::exception& e) {
    return invalid_model(std::string("shared arena: ") + e.what());
  }
}

SharedArena shared_arena_member(const SharedArena& shared, size_t index) {
  SharedArena s = shared;
  s.member = index < shared.members.size() ? shared.members[index] : std::string();
  return s;
}

void write_shared_arena(ir::Model& model, const SharedArena& shared) {
  model.set_metadata(kSharedArenaMetadataKey, shared_arena_to_json(shared));
}

Result<std::optional<SharedArena>> read_shared_arena(const ir::Model& model) {
  auto text = model.metadata(kSharedArenaMetadataKey);
  if (!text) return std::optional<SharedArena>();
  XOPT_ASSIGN_OR_RETURN(SharedArena s, shared_arena_from_json(*text));
  return std::optional<SharedArena>(std::move(s));
}

}  // namespace xopt::planner
