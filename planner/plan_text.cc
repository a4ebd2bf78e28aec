#include "planner/plan_text.h"

#include <algorithm>

namespace xopt::planner {

std::string plan_to_text(const MemoryPlan& plan) {
  std::string out = "plan: arena=" + std::to_string(plan.arena_bytes) +
                    " lower_bound=" + std::to_string(plan.lower_bound) +
                    " naive=" + std::to_string(plan.naive_bytes) + " strategy=" + plan.strategy +
                    " align=" + std::to_string(plan.alignment);
  if (plan.io_in_arena) out += " io_in_arena";
  if (plan.proven_optimal) out += " optimal";
  if (plan.workspace_bytes != 0) out += " workspace=" + std::to_string(plan.workspace_bytes);
  out += "\norder:";
  for (const auto& n : plan.node_order) out += " " + n;
  out += "\n";
  size_t width = 5;
  for (const auto& v : plan.values) width = std::max(width, v.name.size());
  auto pad = [](std::string s, size_t w, bool right) {
    if (s.size() >= w) return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
  };
  out += pad("value", width, false) + "  " + pad("offset", 8, true) + "  " + pad("size", 8, true) +
         "  " + pad("bytes", 8, true) + "  steps\n";
  for (const auto& v : plan.values) {
    std::string line = pad(v.name, width, false) + "  " + pad(std::to_string(v.offset), 8, true) +
                       "  " + pad(std::to_string(v.size), 8, true) + "  " +
                       pad(std::to_string(v.bytes), 8, true) + "  " + std::to_string(v.first_step) +
                       ".." + std::to_string(v.last_step);
    if (v.role != "activation") line += " " + v.role;
    if (!v.alias_of.empty())
      line += " " + (v.alias_kind.empty() ? std::string("alias") : v.alias_kind) + " " + v.alias_of;
    out += line + "\n";
  }
  return out;
}

}  // namespace xopt::planner
