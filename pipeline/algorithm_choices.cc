#include "pipeline/algorithm_choices.h"

#include <nlohmann/json.hpp>

namespace xopt::pipeline {

void write_algorithm_choices(ir::Model& model, const AlgorithmChoices& choices) {
  nlohmann::json j;
  j["version"] = 1;
  j["device"] = choices.device;
  j["nodes"] = nlohmann::json::object();
  for (const auto& [key, choice] : choices.nodes) j["nodes"][key] = choice;
  model.set_metadata(kAlgorithmChoicesKey, j.dump());
}

Result<AlgorithmChoices> read_algorithm_choices(const ir::Model& model) {
  AlgorithmChoices out;
  const std::optional<std::string> text = model.metadata(kAlgorithmChoicesKey);
  if (!text) return out;
  const std::string where = std::string("metadata \"") + kAlgorithmChoicesKey + "\": ";
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return invalid_model(where + "not a JSON object");
  if (!j.contains("version") || j["version"] != 1)
    return invalid_model(where + "version must be 1");
  if (j.contains("device")) {
    if (!j["device"].is_string()) return invalid_model(where + "\"device\" must be a string");
    out.device = j["device"].get<std::string>();
  }
  if (!j.contains("nodes") || !j["nodes"].is_object())
    return invalid_model(where + "\"nodes\" must be an object of node -> choice");
  for (const auto& [key, choice] : j["nodes"].items()) {
    if (!choice.is_string())
      return invalid_model(where + "the choice for node '" + key + "' is not a string");
    out.nodes[key] = choice.get<std::string>();
  }
  return out;
}

}  // namespace xopt::pipeline
