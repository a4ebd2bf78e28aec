// The memory report: the breakdown (planner/memory_breakdown.h: the device buckets as allocated,
// with offload the host bucket beside them) with the planner's quality figures (naive total, lower
// bound, ratios, each strategy's arena). As a text table and as JSON (report.json, with the offload
// schedule when there is one); the library returns strings, the tools write them.
#pragma once

#include <string>

#include "planner/memory_plan.h"

namespace xopt::planner {

struct OffloadPlan;

// `offload` (may be null): the schedule made for --mem-budget, which moves weights to the host.
std::string report_text(const MemoryPlan& plan, const OffloadPlan* offload = nullptr);
std::string report_json(const MemoryPlan& plan, const OffloadPlan* offload = nullptr);

// "1.50 GiB", "512.00 MiB", "12.00 KiB", "100 B".
std::string human_bytes(size_t bytes);

}  // namespace xopt::planner
