// The memory report: the four buckets (CUDA context, parameters, activations = the arena,
// workspace) with the planner's quality figures (naive total, lower bound, ratios, each strategy's
// arena). As a text table and as JSON (report.json); the library returns strings, the tools write
// them.
#pragma once

#include <string>

#include "planner/memory_plan.h"

namespace xopt::planner {

std::string report_text(const MemoryPlan& plan);
std::string report_json(const MemoryPlan& plan);

// "1.50 GiB", "512.00 MiB", "12.00 KiB", "100 B".
std::string human_bytes(size_t bytes);

}  // namespace xopt::planner
