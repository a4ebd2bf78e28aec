// Provenance in the saved model: which of the user's original nodes each node of an optimized
// model stands for, as the passes recorded it in memory (Node::provenance), kept in
// ModelProto.metadata_props under "xopt.provenance" so that tools reading the file (`xviz diff`)
// match nodes exactly instead of inferring it from names and value flow. The document is compact:
//   {"version": 1, "nodes": {"<node name>": ["<original>", ...], ...}}
// listing only the nodes that stand for others (an original node stands for itself).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::ir {

inline constexpr const char* kProvenanceMetadataKey = "xopt.provenance";

// Node name -> the original nodes it replaced, in the order the passes recorded them.
using ProvenanceMap = std::map<std::string, std::vector<std::string>>;

// The provenance the nodes of `graph` carry (named nodes with a non-empty provenance).
ProvenanceMap provenance_of(const Graph& graph);
std::string provenance_to_json(const ProvenanceMap& map);
Result<ProvenanceMap> provenance_from_json(const std::string& text);

// Stores provenance_of(model's graph) in the model's metadata when some node stands for others,
// and drops any record stored before (a model loaded back carries no provenance in memory, so a
// record it came with describes another model: the one it was optimized from).
void write_provenance(Model& model);
// The stored map; none (empty) when the model has no such metadata. A malformed document is an
// error naming the key and what is wrong.
Result<ProvenanceMap> read_provenance(const Model& model);

}  // namespace xopt::ir
