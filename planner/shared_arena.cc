#include "planner/shared_arena.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

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
    s.id += (i == 0 ? "" : "+") + members[i];
  }
  s.members = members;
  return s;
}

SharedArenaFigures shared_arena_figures(const SharedArena& shared,
                                        const std::vector<const MemoryPlan*>& plans) {
  SharedArenaFigures f;
  for (const MemoryPlan* p : plans) {
    f.member_totals.push_back(p->breakdown.total());
    f.separate_total += p->breakdown.total();
    f.parameters += p->breakdown.parameters;
    f.context = std::max(f.context, p->breakdown.cuda_context);
  }
  f.shared_total = f.parameters + shared.arena_bytes + shared.workspace_bytes + f.context;
  return f;
}

std::string shared_arena_to_json(const SharedArena& s) {
  nlohmann::json j = {{"format", "xopt.shared_arena"},
                      {"version", 1},
                      {"id", s.id},
                      {"alignment", s.alignment},
                      {"arena_bytes", s.arena_bytes},
                      {"workspace_bytes", s.workspace_bytes},
                      {"members", s.members}};
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
    return s;
  } catch (const nlohmann::json::exception& e) {
    return invalid_model(std::string("shared arena: ") + e.what());
  }
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
