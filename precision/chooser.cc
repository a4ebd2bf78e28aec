#include "precision/chooser.h"

#include "precision/local_error.h"

namespace xopt::precision {

Result<ChoiceReport> choose_for_model(const ir::Model& model,
                                      const passes::PrecisionOptions& options,
                                      const ChooserConfig& config) {
  CalibrationSource source = config.source;
  if (source.dir.empty()) source.dir = options.calibration_dir;
  std::vector<std::string> notes;
  XOPT_ASSIGN_OR_RETURN(auto sets, calibration_inputs(*model.graph, source, &notes));
  XOPT_ASSIGN_OR_RETURN(Calibration cal, calibrate(model, sets));
  NodeRules rules;
  if (config.rules) {
    XOPT_ASSIGN_OR_RETURN(rules, config.rules(model, options));
  }
  ChooseOptions choose = config.choose;
  choose.max_error = options.max_error;
  ChoiceReport report =
      choose_precision(*model.graph, cal, local_errors(*model.graph, cal), rules, choose);
  report.notes = std::move(notes);
  return report;
}

passes::PrecisionChooser make_chooser(ChooserConfig config) {
  return [config = std::move(config)](
             const ir::Model& model,
             const passes::PrecisionOptions& options) -> Result<passes::PrecisionChoice> {
    XOPT_ASSIGN_OR_RETURN(ChoiceReport report, choose_for_model(model, options, config));
    passes::PrecisionChoice choice = to_choice(report);
    if (config.report) *config.report = std::move(report);
    return choice;
  };
}

}  // namespace xopt::precision
