// The precision pass in the pipeline: the `mixed` chooser installed by default (calibration from
// PrecisionOptions::calibration_dir, else seeded random inputs at the pipeline's shapes), its
// report kept in the optimized model (metadata "xopt.precision_choice", read by report.html and
// `xviz graph`), and what convert-precision did, for the printed plan and report.json.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "passes/pass.h"
#include "precision/choose.h"

namespace xopt::pipeline {

inline constexpr const char* kPrecisionChoiceKey = "xopt.precision_choice";

// When options.precision.mode is mixed and no chooser is installed: installs precision's chooser
// and returns the report it will fill; nullptr otherwise.
std::shared_ptr<precision::ChoiceReport> install_mixed_chooser(passes::PassOptions& options,
                                                               const ir::ShapeBindings& shapes,
                                                               uint64_t seed);

// Stores the report (when the chooser ran) in the model's metadata.
void record_mixed_choice(ir::Model& model, const std::shared_ptr<precision::ChoiceReport>& report);

// "" when convert-precision did not change the model, else e.g. "fp16: 52 nodes converted, 3
// kept fp32 (schema 1, rule 2)", from its `xopt.precision` metadata.
std::string precision_summary(const ir::Model& model);
// The plan's report.json with a "precision" object (mode, nodes per type, kept fp32 per rule)
// added when the model was converted; `json` unchanged otherwise.
std::string with_precision_report(const std::string& json, const ir::Model& model);

}  // namespace xopt::pipeline
