// Op families: the colour of a node card, of a timeline rectangle, and the legend beside them.
#pragma once

#include <string>
#include <vector>

namespace xopt::viz {

struct OpFamily {
  const char* name;    // "convolution", "matmul", ...
  const char* colour;  // fill, "#rrggbb"
};

// The family of an op type (any domain); "other" when none fits.
const OpFamily& op_family(const std::string& op_type);
// Every family, in legend order.
const std::vector<OpFamily>& op_families();
// The family of graph inputs and outputs (and of values that no node produces).
const OpFamily& io_family();
// Node workspace planned inside the arena (plan values of role "workspace").
const OpFamily& workspace_family();

}  // namespace xopt::viz
