// Facts about nodes that decide whether evaluating them ahead of time, or merging two of them, is
// sound: random ops give a different result on every run, and ops with subgraphs or unknown domains
// may do anything.
#pragma once

#include "ir/graph.h"

namespace xopt::passes {

// RandomNormal/Uniform(Like), Multinomial, Bernoulli, and Dropout unless it provably runs in
// inference mode; also the onnxruntime dropout contrib ops.
bool is_random(const ir::Node& n);
// True when one of the node's attributes is a graph or a list of graphs (If, Loop, Scan, ...).
bool has_subgraph(const ir::Node& n);
// A node whose result depends only on its inputs and attributes: a tensor op of the default or
// com.microsoft domain that is neither random nor carries a subgraph.
bool is_pure(const ir::Node& n);

}  // namespace xopt::passes
