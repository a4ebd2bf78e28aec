#include "tools/xopt/shared_arena.h"

#include <cstdio>

#include "planner/report.h"

namespace xopt::tool {

void print_shared_arena(const pipeline::SharedArenaOutcome& g, bool quiet) {
  const planner::SharedArenaFigures& f = g.figures;
  std::printf("shared arena %s: %zu models that run one at a time on one GPU\n",
              g.shared.id.c_str(), g.names.size());
  std::printf("  %-24s %14s %14s %14s %14s\n", "model", "parameters", "arena", "workspace",
              "alone (total)");
  for (size_t i = 0; i < g.names.size(); ++i) {
    const planner::MemoryPlan& p = g.plans[i];
    std::printf("  %-24s %14zu %14zu %14zu %14zu\n", g.names[i].c_str(), p.breakdown.parameters,
                p.arena_bytes, p.workspace_bytes, f.member_totals[i]);
  }
  std::printf("  %-24s %14zu %14zu %14zu %14s\n", "shared", f.parameters, g.shared.arena_bytes,
              g.shared.workspace_bytes, "");
  std::printf(
      "  shared total   %14zu  %12s  (parameters + largest arena + largest workspace + "
      "one context of %s)\n",
      f.shared_total, planner::human_bytes(f.shared_total).c_str(),
      planner::human_bytes(f.context).c_str());
  std::printf(
      "  separate total %14zu  %12s  (each model with its own arena, workspace and "
      "context)\n",
      f.separate_total, planner::human_bytes(f.separate_total).c_str());
  if (quiet) return;
  for (const std::string& path : g.written) std::printf("wrote %s\n", path.c_str());
}

}  // namespace xopt::tool
