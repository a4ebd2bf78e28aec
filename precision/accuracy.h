// The accuracy report as JSON that CI can gate on: per comparison table (one per data set), per
// output, compare.h's figures and verdict and accuracy.h's (p99, NaN/inf, top-1/top-5). Written by
// `xopt validate --json FILE` (format "xopt.accuracy", version 1).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/cpu/compare.h"

namespace xopt::precision {

struct AccuracyTable {
  std::string title;
  std::vector<exec::TensorDiff> diffs;
};

// One output's figures (NaN and inf figures as null: JSON has neither).
nlohmann::json diff_json(const exec::TensorDiff& d);

// {"format": "xopt.accuracy", "version": 1, "passed": ..., "tolerance": {...}, "tables": [...],
//  "worst": {"max_rel": ..., "min_cosine": ..., "nan": ..., "inf": ..., "min_top1": ...}}
nlohmann::json accuracy_json(const std::vector<AccuracyTable>& tables,
                             const exec::CompareTolerance& tolerance);

}  // namespace xopt::precision
