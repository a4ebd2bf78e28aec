// The op registry: for each (domain, op type, opset range) the shape and type inference function
// and the facts the memory planner needs (views, in-place candidates).
//
// Entries are split where an op's signature changes across opsets (Clip's min/max become inputs at
// 11, Squeeze's axes at 13, ...), so `all_ops()` doubles as the list of supported ops with their
// ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::ir {

// Newest ai.onnx opset whose schemas were reviewed for the registered ops (ONNX 1.23 defines up to
// 28). After opset 21 these ops only gained element types, so their shape rules are those of 21.
inline constexpr int kMaxOpset = 28;

// One element of a small integer tensor followed through shape arithmetic: a known integer (of any
// sign, unlike Dim), a named symbol ("N"), or unknown.
struct SymInt {
  std::optional<int64_t> value;
  std::string symbol;

  static SymInt known(int64_t v) { return {v, {}}; }
  static SymInt named(std::string s) { return {std::nullopt, std::move(s)}; }
  static SymInt unknown() { return {}; }
  static SymInt from_dim(const Dim& d) {
    return d.is_known() ? known(d.value) : d.is_symbolic() ? named(d.symbol) : unknown();
  }
  bool is_known() const { return value.has_value(); }
  bool is_symbolic() const { return !value && !symbol.empty(); }
  // The same quantity for sure (equal values, or the same symbol).
  bool same_as(const SymInt& o) const {
    return is_known() ? (o.is_known() && *value == *o.value)
                      : (is_symbolic() && symbol == o.symbol);
  }
  // As a dimension: known values >= 0 and symbols carry over, anything else is unknown.
  Dim to_dim() const {
    if (is_known()) return *value >= 0 ? Dim(*value) : Dim();
    return is_symbolic() ? Dim::symbolic(symbol) : Dim();
  }
};
using SymData = std::vector<SymInt>;

// What one inference run knows beyond shapes: Constant node outputs and the propagated contents of
// small integer tensors.
struct KnownValues {
  std::unordered_map<const Value*, Tensor> constants;
  std::unordered_map<const Value*, SymData> data;
};

// Largest integer tensor whose contents are propagated as data.
inline constexpr int64_t kMaxDataElements = 4096;

// The view of one node handed to an op's inference function. Outputs are recorded here and applied
// to the graph by infer_shapes (merged with what the values already declared).
class InferenceContext {
 public:
  struct Output {
    bool set = false;
    DType dtype = DType::kUndefined;
    Shape shape;
    std::optional<SymData> data;
    std::optional<Tensor> constant;  // the full content, for Constant nodes
    // A non-tensor type (sequence, optional): replaces dtype and shape.
    std::optional<onnx::TypeProto> type;
  };

  InferenceContext(const Node& node, const KnownValues& known);

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }

  // Inputs; an omitted optional input (or one past the end) is absent.
  size_t num_inputs() const { return node_.num_inputs(); }
  bool has_input(size_t i) const { return node_.input(i) != nullptr; }
  const Value* input(size_t i) const { return node_.input(i); }
  DType input_dtype(size_t i) const;
  // Unknown rank when absent.
  const Shape& input_shape(size_t i) const;
  // The content of input i when it is an initializer or a Constant node output; nullptr otherwise.
  const Tensor* input_constant(size_t i) const;
  // The content of an integer input known element by element (constants, shape arithmetic);
  // nullptr when not known. Flattened, so only meaningful for scalars and 1-D tensors.
  const SymData* input_data(size_t i) const;
  // The content of an integer input when every element is known.
  std::optional<std::vector<int64_t>> input_ints(size_t i) const;
  // The content of a float or integer constant input as doubles (scales, Range bounds).
  std::optional<std::vector<double>> input_doubles(size_t i) const;

  size_t num_outputs() const { return node_.num_outputs(); }
  bool has_output(size_t i) const { return node_.output(i) != nullptr; }
  // Records output i (ignored when the node omits that output).
  void set_output(size_t i, DType dtype, Shape shape);
  // Records a non-tensor type (sequence, optional; see ir/value_type.h) for output i; a tensor
  // type is the same as set_output(i, dtype, shape).
  void set_output_type(size_t i, const onnx::TypeProto& type);
  // Records the propagated content of output i (an integer tensor of at most kMaxDataElements).
  void set_output_data(size_t i, SymData data);
  // Records the full content of output i (Constant), so later nodes can read it as a constant.
  void set_output_constant(size_t i, Tensor value);
  const std::vector<Output>& outputs() const { return outputs_; }

  // An error naming the node: "node 'conv1' (Conv): <what>".
  Status error(const std::string& what) const;

 private:
  const Node& node_;
  const KnownValues& known_;
  int64_t opset_;
  std::vector<Output> outputs_;
  mutable std::unordered_map<size_t, SymData> constant_data_;  // decoded constant inputs
};

using InferFn = Status (*)(InferenceContext&);

struct OpInfo {
  std::string domain;  // "" is ai.onnx
  std::string op_type;
  int since_version = 1;
  int until_version = kMaxOpset;  // inclusive
  InferFn infer = nullptr;
  // Output 0 shares input 0's bytes (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout in
  // inference). Use is_view_node(), which also checks per-node conditions.
  bool is_view = false;
  // Pointwise: output i may reuse the bytes of an input of the same byte size (in-place candidate).
  bool elementwise = false;
};

// The entry for `op_type` of `domain` ("" or "ai.onnx" for the default domain) at `opset`, or
// nullptr.
const OpInfo* find_op(std::string_view domain, std::string_view op_type, int64_t opset);
// The entry for a node at its graph's opset, or nullptr.
const OpInfo* find_op(const Node& node);
// Every registered entry, sorted by domain, op type and opset.
const std::vector<OpInfo>& all_ops();

// True when the node's output 0 is a view of input 0: the op's is_view fact, and for Dropout only
// when it runs in inference mode (no training_mode input, or a constant false one).
bool is_view_node(const Node& node);

}  // namespace xopt::ir
