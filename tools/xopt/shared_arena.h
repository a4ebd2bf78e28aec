// `xopt --passes=...,plan --shared-arena a.onnx b.onnx c.onnx`: after each model was optimized and
// planned on its own and the group recorded in every output (pipeline/shared_arena.h), the shared
// figures are printed next to the separate ones.
#pragma once

#include "pipeline/shared_arena.h"

namespace xopt::tool {

// The table on stdout, and (unless `quiet`) the report files written.
void print_shared_arena(const pipeline::SharedArenaOutcome& group, bool quiet);

}  // namespace xopt::tool
