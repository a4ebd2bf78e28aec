// A node's local error in float16 and bfloat16: the node alone, on its fp32 inputs from the
// calibration run, with those inputs rounded to the type, compared with its fp32 outputs.
//
//   own error = max over the node's float outputs of  ||y_t - y|| / ||y||
//
// (2-norms over the tensor's elements; y: the fp32 output, y_t: the output in type t read back as
// float): the relative RMS error, the figure that bounds the cosine against fp32 (cosine >=
// sqrt(1 - e^2)) and adds up across nodes as a root sum of squares (choose.h). A single element
// does not decide it: rounding to float16 alone gives about 2^-11 / sqrt(3) = 2.8e-4, to bfloat16
// 2.3e-3. It is inf when y_t has NaN or inf where y is finite (the type overflowed). The node runs
// with its own CPU kernel in the type ("kernel"); where that kernel takes no such type, the fp32
// kernel runs on the rounded inputs and its outputs are rounded ("rounded": what a kernel that
// stores in the type and accumulates in fp32 computes). The inputs' rounding is counted although
// a low-precision producer has already done it: the estimate errs on the safe side.
//
// Relative to scale, an error can look small where it is not: scores plus a -1e9 mask have a
// scale of 1e9, and the softmax after them turns an absolute error of 1e-2 in the unmasked scores
// into a relative error of 1e-2. So the perturbed outputs are also carried `hops` nodes downstream
// (those nodes in fp32, on the calibration's other inputs; Transpose, Reshape and the like count
// no hop), and the node's error is the largest relative error seen at itself or any of them.
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
  // The largest relative RMS error the node's conversion causes at itself or downstream (above).
  double fp16 = std::numeric_limits<double>::infinity();
  double bf16 = std::numeric_limits<double>::infinity();
  // The node's own output error (relative RMS).
  double own_fp16 = std::numeric_limits<double>::infinity();
  double own_bf16 = std::numeric_limits<double>::infinity();
  std::string worst_at_fp16;  // node key where fp16's error is largest ("" when at the node)
  std::string method;         // "kernel" or "rounded" (see above); "" when not measured
  std::string problem;        // why it was not measured (no float output, a subgraph, ...), else ""
  bool measured() const { return problem.empty(); }
  double of(ir::DType t) const { return t == ir::DType::kFloat16 ? fp16 : bf16; }
};

struct LocalErrorOptions {
  int hops = 3;  // nodes downstream that see the perturbed outputs (0: the node alone)
};

// The node's local error, its inputs and outputs looked up by name in `values` (the calibration's
// first input set). Downstream nodes are those of the node's graph.
LocalError node_local_error(const ir::Node& node,
                            const std::map<std::string, ir::Tensor, std::less<>>& values,
                            const LocalErrorOptions& options = {});

// Every node of the graph, by node_key (its name, or "@" + its first output's name).
std::map<std::string, LocalError, std::less<>> local_errors(const ir::Graph& graph,
                                                            const Calibration& calibration,
                                                            const LocalErrorOptions& options = {});

}  // namespace xopt::precision
