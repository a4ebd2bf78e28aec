// Subgraph attributes (If's branches, Loop's and Scan's body) as Models of their own, so shape
// inference, the verifier, the CPU executor and the passes can work on them with the same code as
// on a top-level graph.
//
// The names a subgraph reads from enclosing scopes become extra graph inputs placed after its own
// inputs: a pass cannot fold or remove them, and the executor feeds them the outer tensors. Writing
// the subgraph back drops those extra inputs again, so the GraphProto stays valid ONNX.
#pragma once

#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::ir {

struct Subgraph {
  Model model;
  // The subgraph's own inputs; model.graph->inputs() past these are outer-scope reads.
  size_t num_formal_inputs = 0;
  // Names of the outer-scope reads, in the order of the extra inputs.
  std::vector<std::string> outer_names;
};

struct SubgraphOptions {
  // Declare the outer-scope reads with the types of the enclosing graph's values (inference,
  // passes); otherwise they are left untyped (execution accepts whatever tensor arrives).
  bool type_outer_reads = true;
  // Drop the declared shapes of the subgraph's own inputs (keeping their element types): a Loop's
  // carried values may change shape from one iteration to the next.
  bool drop_input_shapes = false;
  // Hand small outer constants (initializers and Constant node outputs of at most
  // kMaxInlinedElements elements, such as Unsqueeze axes, and integer values whose every element
  // shape inference computed) to the subgraph as initializers instead of inputs, so its shape
  // inference sees their values. For inference only: written back, the subgraph would carry copies.
  bool inline_small_outer_constants = false;
};

inline constexpr int64_t kMaxInlinedElements = 4096;

// The graph attribute `attr` of `node` as a Model with the enclosing model's opset imports. Errors
// name the node and the attribute.
Result<Subgraph> load_subgraph(const Node& node, const std::string& attr,
                               const SubgraphOptions& options = {});
Result<Subgraph> load_subgraph(const Node& node, const onnx::GraphProto& graph,
                               const SubgraphOptions& options = {});

// The GraphProto of a (possibly rewritten) subgraph, without the extra outer-scope inputs.
onnx::GraphProto subgraph_to_proto(const Subgraph& sg);

// Names of the graph attributes of a node (then_branch, else_branch, body, ...), in order.
std::vector<std::string> subgraph_attrs(const Node& node);

// Names `g` reads from enclosing scopes (used but not defined inside it, recursively), appended to
// `out` in first-use order; `defined` holds names already defined around it, `seen` the names
// already reported. The loader (onnx_io.cc) and load_subgraph share it.
void collect_outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string> defined,
                         std::vector<std::string>& out, std::set<std::string>& seen);

// Rebuilds the implicit inputs of `node` from its subgraph attributes, after a pass created the
// node or rewrote one of them: every outer-scope name they read, resolved in the node's graph.
void refresh_implicit_inputs(Node& node);

}  // namespace xopt::ir
