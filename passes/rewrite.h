// Helpers shared by rewriting passes: reading constant inputs and replacing a node's result while
// the names the outside world sees (graph outputs, values read by name from inside subgraphs) stay
// put.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::passes {

// The content of `v` when it is known without running the graph: a constant initializer (not an
// overridable graph input) or the output of a Constant node. nullopt otherwise.
std::optional<ir::Tensor> constant_value(const ir::Value* v);

// True when `v` is read from inside a subgraph (a Use with a negative index).
bool has_implicit_uses(const ir::Value* v);
// True when other code refers to `v` by its name: it is a graph output or read from a subgraph.
bool name_is_visible(const ir::Value* v);

// Removes `node` after making every reader of its output `old` read `existing` instead; the node's
// other outputs must be unused. When `old`'s name is visible, `existing` takes that name, which
// needs `existing` to be a node result whose own name is not visible. Returns false, changing
// nothing, when that is impossible (e.g. `existing` is a graph input and `old` a graph output).
bool bypass_node(ir::Graph& graph, ir::Node* node, ir::Value* old, ir::Value* existing);

// Renames `v` to a fresh temporary name and returns its old name, so that a replacement can be
// created under the original name; then replace_all_uses(v, replacement) and remove v's producer.
std::string release_name(ir::Graph& graph, ir::Value* v);

}  // namespace xopt::passes
