// The memory-plan JSON reader and checker, as plan-info and the executors use them: a plan that
// check_plan accepts must be safe to print and to place values in (every value inside the arena).
#include <cstddef>
#include <cstdint>
#include <string>

#include "planner/memory_plan.h"
#include "planner/plan_text.h"
#include "planner/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xopt;
  auto plan = planner::plan_from_json(std::string(reinterpret_cast<const char*>(data), size));
  if (!plan.is_ok()) return 0;
  if (!planner::check_plan(*plan).is_ok()) return 0;
  for (const planner::PlannedValue& v : plan->values) {
    // What the executors rely on once check_plan passed.
    if (v.size > plan->arena_bytes || v.offset > plan->arena_bytes - v.size) __builtin_trap();
    if (v.bytes > v.size) __builtin_trap();
    if (v.first_step < -1 || v.first_step > v.last_step) __builtin_trap();
    // A plan without a node order (one made on the graph's own order) is bounded by the graph's
    // steps, which the executors check against the graph; with one, by its length.
    if (!plan->node_order.empty() && v.last_step >= static_cast<int64_t>(plan->node_order.size()))
      __builtin_trap();
  }
  (void)planner::report_text(*plan);
  (void)planner::plan_to_text(*plan);
  auto again = planner::plan_from_json(planner::plan_to_json(*plan));
  if (!again.is_ok()) __builtin_trap();
  return 0;
}
