// A node's local error in float16 and bfloat16: the node alone, on its fp32 inputs from the
// calibration run, with those inputs rounded to the type, compared with its fp32 outputs.
//
//   local error = max over the node's float outputs of  max|y_t - y| / max|y|
//
// (y: the fp32 output, y_t: the output in type t read back as float), so it is relative to the
// output's scale, the way compare.h judges model outputs; inf when y_t has NaN or inf where y is
// finite (the type overflowed). The node runs with its own CPU kernel in the type ("kernel"); where
// that kernel takes no such type, the fp32 kernel runs on the rounded inputs and its outputs are
// rounded ("rounded": what a kernel that stores in the type and accumulates in fp32 computes).
#pragma once

#include <limits>
#include <map>
#include <string>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "precision/calibrate.h"

namespace xopt::precision {

// The key a node goes by in the choice, the report and the pass's `xopt.precision` metadata: its
// name, or "@" + its first output's name when it has none (passes::precision_node_key).
std::string node_key(const ir::Node& node);

struct LocalError {
  double fp16 = std::numeric_limits<double>::infinity();
  double bf16 = std::numeric_limits<double>::infinity();
  std::string method;   // "kernel" or "rounded" (see above); "" when not measured
  std::string problem;  // why it was not measured (no float output, a subgraph, ...), else ""
  bool measured() const { return problem.empty(); }
  double of(ir::DType t) const { return t == ir::DType::kFloat16 ? fp16 : bf16; }
};

// The node's local error, its inputs and outputs looked up by name in `values` (the calibration's
// first input set).
LocalError node_local_error(const ir::Node& node,
                            const std::map<std::string, ir::Tensor, std::less<>>& values);

// Every node of the graph, by node_key (its name, or "@" + its first output's name).
std::map<std::string, LocalError, std::less<>> local_errors(const ir::Graph& graph,
                                                           const Calibration& calibration);

}  // namespace xopt::precision
