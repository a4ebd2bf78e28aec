// Node marks by precision for `xviz graph`: a node convert-precision put in float16 or bfloat16
// gets a coloured border and a card line naming its type (and, for `mixed`, why), from the model's
// `xopt.precision` metadata (the pass's record) and `xopt.precision_choice` (the chooser's report);
// a model without them is marked from its nodes' output types. The HTML report's precision table
// comes from the same metadata.
#pragma once

#include <string>
#include <unordered_map>

#include "ir/graph.h"
#include "viz/graph_drawing.h"

namespace xopt::viz {

inline constexpr const char* kFloat16Colour = "#1b7f3b";   // green
inline constexpr const char* kBFloat16Colour = "#1f5fbf";  // blue

// Marks by node name, for GraphOptions::marks; empty for an fp32 model.
std::unordered_map<std::string, NodeMark> precision_marks(const ir::Model& model);

// The report's precision section: a table with a row per node (type, why, largest |x|, headroom,
// local error in float16 and bfloat16), from the same metadata; "" for a model without it.
std::string precision_table_html(const ir::Model& model);

}  // namespace xopt::viz
