// Running whole conformance folders (conformance.h runs one case): what xopt-conformance and
// `xopt conformance` share, so both print the same table (format_report) from the same results.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/conformance.h"

namespace xopt::exec::conformance {

struct SuiteOptions {
  Options run;
  // Only cases whose name (folder or light model stem) matches this ECMAScript regex; "" = all.
  std::string filter;
  // Called after each case (progress printing).
  std::function<void(const CaseResult&)> on_case;
};

// The folders run when none are given: SHARED/onnx-conformance/{node, simple, pytorch-converted,
// pytorch-operator, light}.
std::vector<std::string> default_suite_dirs(const std::string& shared_dir);

// Every case under each of `dirs`, in order. Errors: a folder that does not exist, a bad filter.
Result<std::vector<CaseResult>> run_suites(const std::vector<std::string>& dirs,
                                           const SuiteOptions& options);

}  // namespace xopt::exec::conformance
