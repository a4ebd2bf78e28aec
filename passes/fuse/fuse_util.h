// Helpers shared by the fusion passes: matching single-reader chains, reading and writing float
// weights, and replacing a chain of nodes by one node that takes over the chain's result.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::passes::fuse {

// The node that reads `v` when that is its only reader (one explicit use, no subgraph reads) and
// `v` is not a graph output, so the chain through `v` may be fused away; nullptr otherwise.
ir::Node* sole_reader(const ir::Value* v);

// True for the default ONNX domain ("" or "ai.onnx") and op `op`.
bool is_onnx_op(const ir::Node& n, const char* op);

// Float or double contents as doubles; nullopt for any other dtype.
std::optional<std::vector<double>> float_values(const ir::Tensor& t);
// A float or double tensor of `dims` holding `values` (rounded to the dtype).
ir::Tensor make_float_tensor(ir::DType dtype, std::vector<int64_t> dims,
                             const std::vector<double>& values);

// A copy of float or double `w` in which every run of `inner` consecutive elements (block b) is
// multiplied by scale(b), computed in double and rounded once.
ir::Tensor scale_blocks(const ir::Tensor& w, int64_t inner,
                        const std::function<double(int64_t)>& scale);
// The sum of every run of `inner` consecutive elements of float or double `w`.
std::vector<double> block_sums(const ir::Tensor& w, int64_t inner);

// Builds `op` (in `domain`) before `anchor`, reading `inputs` and with attributes `attrs`, so that
// it produces what `result` held: readers of `result` (graph output entry included) read the new
// node's output, which takes `result`'s name, dtype and shape. The new node records the provenance
// of every node in `replaced` (in that order) and takes the first one's name (list the main op
// first). The replaced nodes are removed, with initializers and Constant nodes only they read,
// and added to `removed`, so a pass walking a snapshot of the nodes can skip them. Every replaced
// node but the one producing `result` must have no reader outside the chain.
ir::Node* replace_chain(ir::Graph& g, const std::string& op, const std::string& domain,
                        const std::vector<ir::Value*>& inputs,
                        const std::vector<onnx::AttributeProto>& attrs, ir::Value* result,
                        const std::vector<ir::Node*>& replaced, ir::Node* anchor,
                        std::unordered_set<const ir::Node*>& removed);

// Removes `v` when nothing reads it and it is an initializer (not a graph input) or the result of
// a Constant node.
// A removed Constant node is added to `removed` when given.
void drop_if_unused(ir::Graph& g, ir::Value* v,
                    std::unordered_set<const ir::Node*>* removed = nullptr);

// An activation a fused op can apply after its main computation.
struct Activation {
  std::string name;           // "Relu", "Clip", ...
  std::vector<float> params;  // FusedConv's activation_params: alpha for LeakyRelu, min and max
                              // for Clip, alpha and beta for HardSigmoid
  std::vector<onnx::AttributeProto> gemm_attrs;  // FusedGemm's activation_alpha/_beta/_gamma
  bool conv = true;                              // FusedConv (MLAS) applies it
  bool gemm = true;  // FusedGemm (onnxruntime's element-wise functors) applies it
};
// The activation `n` computes on float32 when it is one of Relu, Sigmoid, Tanh, LeakyRelu,
// HardSigmoid (both fused ops), Clip with constant or absent bounds (FusedConv only), Elu, Selu,
// ThresholdedRelu, Softplus, Softsign (FusedGemm only); nullopt otherwise.
std::optional<Activation> match_activation(const ir::Node& n);

}  // namespace xopt::passes::fuse
