// `--precision mixed` in the tools: the chooser of precision/chooser.h installed into the pass
// options, and its report kept in the optimized model (metadata "xopt.precision_choice", read by
// report.html and `xviz graph`).
#pragma once

#include <cstdint>
#include <memory>

#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "passes/pass.h"
#include "precision/choose.h"

namespace xopt::tool {

inline constexpr const char* kPrecisionChoiceKey = "xopt.precision_choice";

// When options.precision.mode is mixed: installs the chooser (calibration from
// options.precision.calibration_dir, else random inputs of `seed` with `shapes`) and returns the
// report it will fill; nullptr otherwise.
std::shared_ptr<precision::ChoiceReport> install_mixed_chooser(passes::PassOptions& options,
                                                               const ir::ShapeBindings& shapes,
                                                               uint64_t seed);

// Stores the report (when the chooser ran) in the model's metadata.
void record_mixed_choice(ir::Model& model, const std::shared_ptr<precision::ChoiceReport>& report);

}  // namespace xopt::tool
