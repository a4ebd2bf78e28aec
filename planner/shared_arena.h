// Several models that run one at a time on one GPU share one activation arena and one workspace
// region: the device holds every model's parameters, the largest arena, the largest workspace and
// one CUDA context, instead of an arena, a workspace and a context per model.
//
//   shared total   = sum(parameters) + max(arena) + max(workspace) + context
//   separate total = sum(parameters + arena + workspace + context)   (each model on its own)
//
// Each member model records the group it belongs to as metadata_props["xopt.shared_arena"], next
// to its own plan (whose offsets all lie inside the shared arena: it is at least as large).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"

namespace xopt::planner {

inline constexpr const char* kSharedArenaMetadataKey = "xopt.shared_arena";

struct SharedArena {
  std::string id;                    // names the group: its members' names joined by '+'
  size_t alignment = 256;            // every member's plan alignment (they must agree)
  size_t arena_bytes = 0;            // the largest member arena
  size_t workspace_bytes = 0;        // the largest member workspace region
  std::vector<std::string> members;  // model names, in the order given
};

// Per-member figures and the two totals above.
struct SharedArenaFigures {
  std::vector<size_t> member_totals;  // each member's own breakdown total (context included)
  size_t parameters = 0;              // sum over members
  size_t context = 0;                 // one context: the largest member figure (measured or not)
  size_t shared_total = 0;
  size_t separate_total = 0;
};

// The group of `plans` (parallel to `members`). Errors: no members, a name twice, plans with
// different alignments.
Result<SharedArena> share_arena(const std::vector<std::string>& members,
                                const std::vector<const MemoryPlan*>& plans);
SharedArenaFigures shared_arena_figures(const SharedArena& shared,
                                        const std::vector<const MemoryPlan*>& plans);

std::string shared_arena_to_json(const SharedArena& shared);
Result<SharedArena> shared_arena_from_json(const std::string& json);

void write_shared_arena(ir::Model& model, const SharedArena& shared);
// nullopt when the model belongs to no group; an error when its record cannot be read.
Result<std::optional<SharedArena>> read_shared_arena(const ir::Model& model);

}  // namespace xopt::planner
