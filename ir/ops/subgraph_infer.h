// Shape inference of a node's subgraph attribute (If, Loop, Scan, FlexAttention's modifiers): the
// subgraph's formal inputs typed from the node, then inferred on its own.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/subgraph.h"

namespace xopt::ir::ops {

// Types input `i` of `g` where its declaration leaves the type or a dim open (a sequence or
// optional `from` gives its whole type).
void type_input(Graph& g, size_t i, DType dtype, const Shape& shape, const Value* from = nullptr);

// Loads the subgraph attribute `attr` of the node (small outer constants inlined), types its
// formal inputs from `input_types` (and `input_values`, for sequences and optionals) and infers it.
// An error names the node and the attribute.
Result<Subgraph> infer_subgraph(const InferenceContext& ctx, const std::string& attr,
                                const std::vector<std::pair<DType, Shape>>& input_types,
                                const std::vector<const Value*>& input_values = {});

}  // namespace xopt::ir::ops
