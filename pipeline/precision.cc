#include "pipeline/precision.h"

#include <map>

#include <nlohmann/json.hpp>

#include "precision/chooser.h"

namespace xopt::pipeline {

std::shared_ptr<precision::ChoiceReport> install_mixed_chooser(passes::PassOptions& options,
                                                               const ir::ShapeBindings& shapes,
                                                               uint64_t seed) {
  if (options.precision.mode != passes::PrecisionMode::kMixed || options.precision.choose)
    return nullptr;
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

namespace {
// The "precision" object of report.json, from the pass's metadata; null when there is none.
nlohmann::json precision_object(const ir::Model& model) {
  auto text = model.metadata("xopt.precision");
  if (!text) return nullptr;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.contains("nodes")) return nullptr;
  std::map<std::string, int64_t> types, kept;
  for (const auto& [key, node] : j["nodes"].items()) {
    const std::string type = node.value("type", "");
    ++types[type];
    if (type == "float") ++kept[node.value("rule", "")];
  }
  nlohmann::json out;
  out["mode"] = j.value("mode", "");
  out["nodes"] = types;
  out["kept_fp32"] = kept;
  return out;
}
}  // namespace

std::string precision_summary(const ir::Model& model) {
  nlohmann::json p = precision_object(model);
  if (p.is_null()) return "";
  int64_t lowp = 0, fp32 = 0;
  for (const auto& [type, n] : p["nodes"].items())
    (type == "float" ? fp32 : lowp) += n.get<int64_t>();
  std::string out = p["mode"].get<std::string>() + ": " + std::to_string(lowp) +
                    " nodes converted, " + std::to_string(fp32) + " kept fp32";
  std::string why;
  for (const auto& [rule, n] : p["kept_fp32"].items())
    why += (why.empty() ? "" : ", ") + rule + " " + std::to_string(n.get<int64_t>());
  return why.empty() ? out : out + " (" + why + ")";
}

std::string with_precision_report(const std::string& json, const ir::Model& model) {
  nlohmann::json p = precision_object(model);
  if (p.is_null()) return json;
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded()) return json;
  j["precision"] = std::move(p);
  return j.dump(2);
}

}  // namespace xopt::pipeline
