// What a node card says: the op, its key attributes, its output's dtype / shape / bytes, the
// weights it reads and how many original nodes it replaced.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace xopt::viz {

// "k3x3 s2 g32", "perm 0,2,1,3", "axis 1", "act Relu": the attributes worth a glance.
std::string key_attributes(const ir::Node& n);
// Bytes of the constant inputs (initializers) a node reads; `count` gets how many.
size_t weight_bytes_of(const ir::Node& n, int* count = nullptr);
// The card as Graphviz HTML-like label text (bold op, small grey detail lines).
// `provenance`: the "fused: replaces N nodes" line (left out where a diff note says more).
std::string node_card_html(const ir::Node& n, bool weights_folded, bool provenance = true);
// A plain-text tooltip: name, op, originals replaced, outputs.
std::string node_tooltip(const ir::Node& n);

}  // namespace xopt::viz
