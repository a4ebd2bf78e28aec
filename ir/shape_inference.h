// Shape and type inference over the whole graph, using the op registry (ir/op_registry.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::ir {

// Bindings for symbolic input dims: `--input-shape NAME=1x3x224x224` and `--batch N` (binds the
// leading dim of every runtime input whose first dim is symbolic or unknown).
struct ShapeBindings {
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::optional<int64_t> batch;
};

// Applies bindings to the graph inputs. Errors name an input that does not exist or whose rank or
// known dims disagree with the binding.
Status bind_input_shapes(Graph& graph, const ShapeBindings& bindings);

struct InferOptions {
  // Fail on an op the registry does not know (otherwise its outputs stay unknown).
  bool strict = false;
};

// Infers dtype and shape of every value in topological order, propagating small int64 shape tensors
// as data (Value::shape_data) so shape subgraphs resolve to static shapes. Errors name the node.
Status infer_shapes(Graph& graph, const InferOptions& options = {});

// Values whose shape is not static (for "the planner refuses to guess" errors).
std::vector<const Value*> values_with_unknown_shape(const Graph& graph);

}  // namespace xopt::ir
