// `xopt --passes=...,plan --shared-arena a.onnx b.onnx c.onnx`: after each model was optimized and
// planned on its own (its output beside it), the group's record is added to every output and the
// shared figures are printed next to the separate ones (planner/shared_arena.h).
#pragma once

#include <string>
#include <vector>

namespace xopt::tool {

// `models` and `outputs` are parallel, and `names` too when given (--name; empty: each member is
// named by its path as given); `report_dir` (may be empty) gets shared_arena.json and .html.
// Returns the exit code.
int finish_shared_arena(const std::vector<std::string>& models,
                        const std::vector<std::string>& names,
                        const std::vector<std::string>& outputs, const std::string& report_dir,
                        bool quiet);

}  // namespace xopt::tool
