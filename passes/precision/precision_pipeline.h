// Where convert-precision runs when the user asks for a precision without naming the pass.
#pragma once

#include "common/status.h"
#include "passes/pass_manager.h"
#include "passes/precision/precision_options.h"

namespace xopt::passes {

// With a precision other than fp32 and no convert-precision in `pm`'s pipeline (--passes without
// the precision group), adds it right before plan-memory, so the plan is made in the new sizes, or
// last when the pipeline plans nothing. fp32, or a pipeline that has the pass: nothing changes.
Status add_precision_pass(PassManager& pm, const PrecisionOptions& options);

}  // namespace xopt::passes
