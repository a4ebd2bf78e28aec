// Matching and rewriting helpers shared by the transformer fusions (fuse-layernorm,
// fuse-skip-layernorm, fuse-gelu, fuse-attention): scalar constants, single readers, building a
// fused node that takes over a value, and removing the nodes a fusion left without readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::passes::xfmr {

// The value of a constant holding exactly one element (any rank), as double.
std::optional<double> scalar_constant(const ir::Value* v);
// |a - b| <= rel * |b|.
bool near(double a, double b, double rel = 1e-5);

// The node reading `v`, when that is its only reader and `v` is neither a graph output nor read by
// name from a subgraph; nullptr otherwise.
ir::Node* single_reader(const ir::Value* v);
// True when every reader of `v` is one of `nodes` and `v` is not a graph output (or read from a
// subgraph), so the nodes can go once the pattern is replaced.
bool only_read_by(const ir::Value* v, const std::vector<ir::Node*>& nodes);

// For a binary node (Add, Mul, ...) with `v` as one input: the other input; nullptr when `v` is
// not an input or both inputs are `v`.
ir::Value* other_input(const ir::Node* n, const ir::Value* v);

// The static dims of `v`, or nullopt when its shape is not fully known.
std::optional<std::vector<int64_t>> static_dims(const ir::Value* v);

// Adds node `op` before `before`, its first output taking over `old`: every reader of `old` (and a
// graph output entry) moves to it and it gets `old`'s name; `old`'s producer is left without
// readers for remove_dead to take. Further outputs get the names in `extra_outputs` ("" = omitted).
// The new output gets `old`'s dtype and shape; provenance lists `replaced`.
ir::Node* add_replacing_node(ir::Graph& g, ir::Value* old, const std::string& op,
                             const std::string& domain, const std::vector<ir::Value*>& inputs,
                             ir::Node* before, const std::vector<ir::Node*>& replaced,
                             const std::vector<std::string>& extra_outputs = {});

// Adds a plain node with one output named from `hint` (the node takes the same name), of the given
// dtype and dims.
ir::Node* add_node(ir::Graph& g, const std::string& op, const std::vector<ir::Value*>& inputs,
                   const std::string& hint, ir::DType dtype, const std::vector<int64_t>& dims,
                   ir::Node* before, const std::string& domain = "");

// Initializers a pass run creates, shared by contents: models often use one weight in several
// layers (deduplicated by the fold group), and the slices, transposes and concatenations a fusion
// derives from it must stay one initializer too.
class ConstantPool {
 public:
  // An initializer holding `t`: one this pool made earlier with the same dtype, dims and bytes,
  // else a new one named from `hint`.
  ir::Value* get(ir::Graph& g, const std::string& hint, ir::Tensor t);

 private:
  std::unordered_multimap<size_t, ir::Value*> by_hash_;
};

// Removes those of `nodes` that no longer have readers (repeatedly, so chains go too) and adds
// them to `removed` (so a walk over a node snapshot can skip them); nodes already in `removed` are
// skipped. Returns how many went.
int remove_dead(ir::Graph& g, const std::vector<ir::Node*>& nodes,
                std::unordered_set<const ir::Node*>* removed = nullptr);

// Columns [begin, begin + count) of a 2-D tensor [rows, cols], any fixed-size dtype.
ir::Tensor slice_columns(const ir::Tensor& t, int64_t begin, int64_t count);
// Elements [begin, begin + count) of a tensor read as flat.
ir::Tensor slice_flat(const ir::Tensor& t, int64_t begin, int64_t count);
// The transpose of a 2-D tensor, any fixed-size dtype.
ir::Tensor transpose_2d(const ir::Tensor& t);
// The 1-D concatenation of `parts` (each flat), all of one dtype.
ir::Tensor concat_flat(const std::vector<ir::Tensor>& parts);

}  // namespace xopt::passes::xfmr
