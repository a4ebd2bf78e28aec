// Structural checks run after every pass in tests and under --verify-each.
#pragma once

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::ir {

// Checks: every value has at most one producer and use lists match node inputs; nodes are in
// topological order; every input is produced, a graph input or an initializer; graph outputs exist;
// an initializer's value agrees with its tensor's type. The error names the node and the value.
Status verify(const Graph& graph);

}  // namespace xopt::ir
