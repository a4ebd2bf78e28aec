// The chooser a tool installs into PrecisionOptions::choose for `--precision mixed`: calibrate
// (calibrate.h), measure each node's local error (local_error.h), choose (choose.h).
#pragma once

#include <functional>
#include <memory>

#include "common/status.h"
#include "ir/graph.h"
#include "passes/precision/precision_options.h"
#include "precision/calibrate.h"
#include "precision/choose.h"

namespace xopt::precision {

using RulesFn =
    std::function<Result<NodeRules>(const ir::Model& model, const passes::PrecisionOptions&)>;

struct ChooserConfig {
  // Calibration inputs; an empty dir takes PrecisionOptions::calibration_dir.
  CalibrationSource source;
  // max_error is taken from PrecisionOptions::max_error.
  ChooseOptions choose;
  // What the rules allow per node; default: the precision pass's analysis (analyze_precision) with
  // the options' --keep-fp32 and --force-lowp.
  RulesFn rules;
  // When set, receives the report of the last choice (for --report and the JSON).
  std::shared_ptr<ChoiceReport> report;
};

// What convert-precision's analysis (passes/precision/precision_analysis.h) allows per node, with
// the options' --keep-fp32 and --force-lowp, by node_key.
Result<NodeRules> rules_from_analysis(const ir::Model& model,
                                      const passes::PrecisionOptions& options);

// Calibration, local errors and the choice for `model` in one call.
Result<ChoiceReport> choose_for_model(const ir::Model& model,
                                      const passes::PrecisionOptions& options,
                                      const ChooserConfig& config);

// A PrecisionChooser calling choose_for_model.
passes::PrecisionChooser make_chooser(ChooserConfig config);

}  // namespace xopt::precision
