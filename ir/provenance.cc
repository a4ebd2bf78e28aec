#include "ir/provenance.h"

#include <nlohmann/json.hpp>

namespace xopt::ir {

ProvenanceMap provenance_of(const Graph& graph) {
  ProvenanceMap map;
  for (const Node* n : graph.nodes())
    if (!n->name().empty() && !n->provenance().empty()) map[n->name()] = n->provenance();
  return map;
}

std::string provenance_to_json(const ProvenanceMap& map) {
  nlohmann::json j;
  j["version"] = 1;
  j["nodes"] = nlohmann::json::object();
  for (const auto& [node, originals] : map) j["nodes"][node] = originals;
  return j.dump();
}

Result<ProvenanceMap> provenance_from_json(const std::string& text) {
  const std::string where = std::string("metadata \"") + kProvenanceMetadataKey + "\": ";
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return invalid_model(where + "not a JSON object");
  if (!j.contains("version") || j["version"] != 1)
    return invalid_model(where + "unknown version (this xopt reads version 1)");
  if (!j.contains("nodes") || !j["nodes"].is_object())
    return invalid_model(where + "\"nodes\" is not an object");
  ProvenanceMap map;
  for (const auto& [node, originals] : j["nodes"].items()) {
    if (!originals.is_array())
      return invalid_model(where + "node '" + node + "': not a list of original node names");
    std::vector<std::string>& out = map[node];
    for (const auto& o : originals) {
      if (!o.is_string())
        return invalid_model(where + "node '" + node + "': an original's name is not a string");
      out.push_back(o.get<std::string>());
    }
  }
  return map;
}

void write_provenance(Model& model) {
  auto* props = model.shell.mutable_metadata_props();
  for (int i = props->size(); i-- > 0;)
    if (props->Get(i).key() == kProvenanceMetadataKey) props->DeleteSubrange(i, 1);
  const ProvenanceMap map = provenance_of(*model.graph);
  if (!map.empty()) model.set_metadata(kProvenanceMetadataKey, provenance_to_json(map));
}

Result<ProvenanceMap> read_provenance(const Model& model) {
  const std::optional<std::string> text = model.metadata(kProvenanceMetadataKey);
  if (!text) return ProvenanceMap{};
  return provenance_from_json(*text);
}

}  // namespace xopt::ir
