// Several models that run one at a time on one GPU share one activation arena and one workspace
// region: the device holds every model's resident parameters, offload staging and I/O region, the
// largest arena, the largest workspace and one CUDA context, instead of an arena, a workspace and
// a context per model. Each figure is a MemoryBreakdown (planner/memory_breakdown.h), the same
// shape as one model's report:
//
//   shared total   = sum(parameters + staging + I/O) + max(arena) + max(workspace) + context
//   separate total = sum(parameters + staging + I/O + arena + workspace + context)
//
// Members are named as the user gave them (a path, or --name); the group's id depends on the
// members' plans only, so it is the same from any working folder.
//
// Each member model records the group it belongs to as metadata_props["xopt.shared_arena"], next
// to its own plan (whose offsets all lie inside the shared arena: it is at least as large).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_breakdown.h"
#include "planner/memory_plan.h"

namespace xopt::planner {

inline constexpr const char* kSharedArenaMetadataKey = "xopt.shared_arena";

struct SharedArena {
  std::string id;                    // "shared-" + a hash of the members' plans (shared_arena_id)
  size_t alignment = 256;            // every member's plan alignment (they must agree)
  size_t arena_bytes = 0;            // the largest member arena
  size_t workspace_bytes = 0;        // the largest member workspace region
  std::vector<std::string> members;  // model names, in the order given
  // In a member's own copy of the record (xopt.shared_arena of each output model): which of
  // `members` this model is. Empty in the group's record.
  std::string member;
};

// Per-member breakdowns, the group's and the members summed, and the two totals above.
struct SharedArenaFigures {
  std::vector<MemoryBreakdown> members;  // each member alone (its own arena, workspace, context)
  MemoryBreakdown shared;                // the group
  MemoryBreakdown separate;              // the members alone, summed
  std::vector<size_t> member_totals;     // members[i].total() (context included)
  size_t parameters = 0;                 // resident parameters, summed over members
  size_t context = 0;                    // one context: the largest member figure
  size_t shared_total = 0;               // shared.total()
  size_t separate_total = 0;             // separate.total()
};

// The group of `plans` (parallel to `members`). Errors: no members, a name twice, plans with
// different alignments.
Result<SharedArena> share_arena(const std::vector<std::string>& members,
                                const std::vector<const MemoryPlan*>& plans);
// "shared-" and 16 hex digits of a hash of each plan's layout (alignment, arena, workspace,
// parameter and I/O bytes, node order, every value's place): neither the members' names nor the
// folder they were read from.
std::string shared_arena_id(const std::vector<const MemoryPlan*>& plans);
// `members` parallel to shared.members (each from memory_breakdown, offload included).
SharedArenaFigures shared_arena_figures_of(const SharedArena& shared,
                                           const std::vector<MemoryBreakdown>& members);
// The same with nothing offloaded.
SharedArenaFigures shared_arena_figures(const SharedArena& shared,
                                        const std::vector<const MemoryPlan*>& plans);

// The table people read: one row per member alone, the members summed, the group, the totals.
std::string shared_arena_text(const SharedArena& shared, const SharedArenaFigures& f);
// shared_arena.json: the group's record, every member's name (with its output, `outputs` parallel
// to the members, may be empty) and breakdown, the group's and the summed breakdowns, the totals.
std::string shared_arena_report_json(const SharedArena& shared, const SharedArenaFigures& f,
                                     const std::vector<std::string>& outputs = {});

std::string shared_arena_to_json(const SharedArena& shared);
Result<SharedArena> shared_arena_from_json(const std::string& json);

// The record stored in `members[index]`'s model: `shared` with `member` set to that name.
SharedArena shared_arena_member(const SharedArena& shared, size_t index);
void write_shared_arena(ir::Model& model, const SharedArena& shared);
// nullopt when the model belongs to no group; an error when its record cannot be read.
Result<std::optional<SharedArena>> read_shared_arena(const ir::Model& model);

}  // namespace xopt::planner
