#include "tools/xopt/precision_chooser.h"

#include "precision/chooser.h"

namespace xopt::tool {

std::shared_ptr<precision::ChoiceReport> install_mixed_chooser(passes::PassOptions& options,
                                                               const ir::ShapeBindings& shapes,
                                                               uint64_t seed) {
  if (options.precision.mode != passes::PrecisionMode::kMixed) return nullptr;
  precision::ChooserConfig config;
  config.source.seed = seed;
  config.source.shapes = shapes;
  config.report = std::make_shared<precision::ChoiceReport>();
  auto report = config.report;
  options.precision.choose = precision::make_chooser(std::move(config));
  return report;
}

void record_mixed_choice(ir::Model& model, const std::shared_ptr<precision::ChoiceReport>& report) {
  if (report == nullptr || report->nodes.empty()) return;
  model.set_metadata(kPrecisionChoiceKey, precision::choice_json(*report).dump());
}

}  // namespace xopt::tool
