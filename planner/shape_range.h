// Planning for a range of input shapes (`--input-shape x=1x3x48x32:1x3x48x2048`, TensorRT's
// min/opt/max profiles): one plan, made at the largest shapes, that every shape in the range runs
// in. It holds only when no value is larger at a smaller shape, so planning checks that every
// value's size is monotone over the range and refuses, naming the value, otherwise (README.md,
// "Shape ranges").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"
#include "planner/planner.h"

namespace xopt::planner {

// "1x3x48x32".
std::string dims_text(const std::vector<int64_t>& dims);
// "x=1x3x48x32:1x3x48x2048" (with opt: "min:opt:max").
std::string range_text(const InputRange& range);

// Checks each range against itself (ranks agree, min <= opt <= max in every dim, no negative dim).
Status check_ranges(const std::vector<InputRange>& ranges);

// Binds the graph's inputs for a range: a dim equal at both ends becomes that size, a dim that
// varies stays symbolic (an unknown dim gets the symbol NAME.dI). Errors name an input that does
// not exist, a rank that differs from the model's, and a dim the model fixes to another size or
// that the model fixes while the range varies it.
Status bind_range(ir::Graph& graph, const std::vector<InputRange>& ranges);

// The shapes of the range at fraction t in [0, 1] from min to max, dim by dim (rounded down).
std::vector<int64_t> range_point(const InputRange& range, double t);

// Plans `model` (bound with bind_range) at the max shapes and returns that plan with the ranges
// and the arena at the min shapes recorded. Before planning it infers every value's size at the
// min shapes, at opt, at points in between and at max, and refuses a value whose size is unknown
// at some point or smaller at a larger point than at a smaller one (the error names the value, its
// producer and the two shapes). Works on copies: `model` is left as it is.
Result<MemoryPlan> plan_range(const ir::Model& model, const std::vector<InputRange>& ranges,
                              const PlanOptions& options);

// For the executors: OK when `dims` lie inside the plan's range for `input` (or the plan has no
// range for it); otherwise an error naming the input, the dim and the range.
Status check_in_range(const MemoryPlan& plan, const std::string& input,
                      const std::vector<int64_t>& dims);

}  // namespace xopt::planner
