#include "passes/precision/precision_pipeline.h"

#include <algorithm>

namespace xopt::passes {

Status add_precision_pass(PassManager& pm, const PrecisionOptions& options) {
  if (options.mode == PrecisionMode::kFp32) return Status::ok();
  const std::vector<std::string> names = pm.pass_names();
  if (std::find(names.begin(), names.end(), "convert-precision") != names.end())
    return Status::ok();
  return pm.insert_pass_before("plan-memory", "convert-precision");
}

}  // namespace xopt::passes
