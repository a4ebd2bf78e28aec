#include "precision/chooser.h"

#include "passes/precision/precision_analysis.h"
#include "precision/local_error.h"

namespace xopt::precision {

Result<NodeRules> rules_from_analysis(const ir::Model& model,
                                      const passes::PrecisionOptions& options) {
  XOPT_ASSIGN_OR_RETURN(passes::PrecisionAnalysis a, passes::analyze_precision(model, options));
  NodeRules rules;
  for (const ir::Node* n : model.graph->nodes()) {
    const std::string key = node_key(*n);
    NodeRule& r = rules[key];
    const passes::NodePrecision* np = a.find(key);
    if (np == nullptr) {
      r = {false, false, false, false, "rule: reads and writes no fp32 tensor"};
      continue;
    }
    r.fp16 = np->fp16;
    r.bf16 = np->bf16;
    const bool user = np->rule == passes::PrecisionRule::kUser;
    r.user_keep_fp32 = user && !np->fp16 && !np->bf16;
    r.user_force_lowp = user && (np->fp16 || np->bf16);
    if (!np->fp16 || !np->bf16)
      r.rule = std::string(passes::precision_rule_name(np->rule)) + ": " + np->why;
  }
  return rules;
}

Result<ChoiceReport> choose_for_model(const ir::Model& model,
                                      const passes::PrecisionOptions& options,
                                      const ChooserConfig& config) {
  CalibrationSource source = config.source;
  if (source.dir.empty()) source.dir = options.calibration_dir;
  std::vector<std::string> notes;
  XOPT_ASSIGN_OR_RETURN(auto sets, calibration_inputs(*model.graph, source, &notes));
  XOPT_ASSIGN_OR_RETURN(Calibration cal, calibrate(model, sets));
  XOPT_ASSIGN_OR_RETURN(NodeRules rules, config.rules ? config.rules(model, options)
                                                      : rules_from_analysis(model, options));
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
