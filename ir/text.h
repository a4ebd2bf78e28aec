// ONNX's own text syntax (libonnx's parser and printer), used by golden pass tests:
//
//   <ir_version: 8, opset_import: ["" : 17]>
//   g (float[1,3,8,8] x) => (float[1,4,8,8] y) <float[4,3,3,3] w = {...}> {
//     y = Conv <pads = [1,1,1,1]> (x, w)
//   }
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::ir {

// Parses a model in ONNX text syntax.
Result<Model> parse_model_text(std::string_view text);
// Prints the graph in ONNX text syntax. Initializers with more than `max_elements` elements print as
// their signature only, so goldens stay readable.
std::string print_graph_text(const Model& model, int64_t max_elements = 16);

}  // namespace xopt::ir
