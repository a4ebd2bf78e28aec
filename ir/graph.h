// The in-memory graph: Values connected by Nodes, kept in topological order.
//
// Everything the optimizer does not touch is carried as the original protobuf so that load + save
// is lossless: node attributes stay onnx::AttributeProto (subgraphs included), and each node, value
// and initializer keeps a "shell" proto holding the fields we do not model (doc strings, metadata,
// unknown fields). The Model owns a ModelProto shell for model-level fields (metadata_props,
// functions, ...).
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/tensor.h"
#include "ir/tensor_proto.h"
#include "onnx/onnx_pb.h"

namespace xopt::ir {

class Graph;
class Node;

// A consumer of a Value: `node` reads it as input `index`; index < 0 marks an implicit read from
// inside one of the node's subgraph attributes (If/Loop/Scan bodies referring to outer-scope
// values).
struct Use {
  Node* node;
  int index;
  bool operator==(const Use& o) const { return node == o.node && index == o.index; }
};

enum class ValueKind {
  kActivation,   // produced by a node
  kInput,        // a graph input without initializer
  kInitializer,  // a constant weight (may also be listed as a graph input in IR < 4)
  kSparseInitializer,
  kUndefined,  // referenced but never defined (a verifier error)
};

class Value {
 public:
  const std::string& name() const { return name_; }
  ValueKind kind() const { return kind_; }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  void set_dtype(DType t) { dtype_ = t; }
  void set_shape(Shape s) { shape_ = std::move(s); }
  // True for tensor-typed values (and untyped ones, taken to be tensors).
  bool is_tensor() const { return is_tensor_; }
  // The full ONNX type of a value that is not a tensor (sequence, optional, map), with the element
  // types and shapes nested inside; VALUE_NOT_SET for a tensor, whose type is dtype() and shape().
  // ir/value_type.h has the helpers to read and build these.
  const onnx::TypeProto& type() const { return type_; }
  // Sets the value's type: a tensor type sets dtype() and shape() (is_tensor() becomes true), any
  // other kind is kept whole in type() (is_tensor() false, dtype undefined, rank unknown).
  void set_type(const onnx::TypeProto& t);

  Node* producer() const { return producer_; }
  int producer_index() const { return producer_index_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }

  bool is_graph_input() const { return is_graph_input_; }
  bool is_graph_output() const { return is_graph_output_; }
  bool is_initializer() const { return initializer_ != nullptr; }
  // A value whose content is known when the graph is built: an initializer that is not also an
  // overridable graph input. Constant nodes are not included here (fold them into initializers).
  bool is_constant() const { return initializer_ != nullptr && !is_graph_input_; }
  const Tensor* initializer() const { return initializer_.get(); }
  Tensor* mutable_initializer() { return initializer_.get(); }

  // Data propagated by shape inference for small int64 tensors (shape arithmetic): one Dim per
  // element when the tensor is 1-D or scalar. Lets Reshape(x, Concat(Shape(y)[0], 128)) get a
  // static shape.
  const std::optional<std::vector<Dim>>& shape_data() const { return shape_data_; }
  void set_shape_data(std::optional<std::vector<Dim>> d) { shape_data_ = std::move(d); }

  // Original ValueInfoProto of the value_info entry (or of the graph input/output entry), kept for
  // lossless export; doc strings and non-tensor types live here.
  const onnx::ValueInfoProto& info() const { return info_; }
  onnx::ValueInfoProto& mutable_info() { return info_; }
  bool has_value_info() const { return has_value_info_; }
  // Original TensorProto of an initializer with the data fields cleared (name, doc, metadata), and
  // how its payload was encoded, so an untouched initializer saves byte-identical.
  const onnx::TensorProto& initializer_shell() const { return initializer_shell_; }
  TensorEncoding initializer_encoding() const { return initializer_encoding_; }
  const onnx::SparseTensorProto* sparse_initializer() const { return sparse_.get(); }

  Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  friend class Node;
  friend class ModelIO;
  Value(Graph* g, std::string name) : name_(std::move(name)), graph_(g) {}

  std::string name_;
  Graph* graph_;
  ValueKind kind_ = ValueKind::kUndefined;
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  bool is_tensor_ = true;
  onnx::TypeProto type_;  // non-tensor values only
  Node* producer_ = nullptr;
  int producer_index_ = -1;
  std::vector<Use> uses_;
  bool is_graph_input_ = false;
  bool is_graph_output_ = false;
  std::shared_ptr<Tensor> initializer_;
  std::optional<std::vector<Dim>> shape_data_;
  onnx::ValueInfoProto info_;         // value_info entry
  onnx::ValueInfoProto input_info_;   // graph input entry
  onnx::ValueInfoProto output_info_;  // graph output entry
  bool has_value_info_ = false;
  onnx::TensorProto initializer_shell_;
  TensorEncoding initializer_encoding_ = TensorEncoding::kRaw;
  std::unique_ptr<onnx::SparseTensorProto> sparse_;
};

class Node {
 public:
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const std::string& op_type() const { return op_type_; }
  const std::string& domain() const { return domain_; }  // "" is the default ONNX domain
  bool is(const char* op) const { return domain_.empty() && op_type_ == op; }
  // The opset version in force for this node's domain.
  int64_t opset() const;

  // Inputs and outputs; an omitted optional input or output is nullptr.
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  // Values read from inside subgraph attributes (outer-scope references).
  const std::vector<Value*>& implicit_inputs() const { return implicit_inputs_; }
  // Replaces them (use lists kept right): for passes that create a node with a subgraph attribute
  // or rewrite one (see ir/subgraph.h, refresh_implicit_inputs).
  void set_implicit_inputs(const std::vector<Value*>& values);

  void set_input(size_t i, Value* v);  // grows the input list as needed
  void add_input(Value* v) { set_input(inputs_.size(), v); }
  void remove_input(size_t i);  // shifts later inputs down
  void replace_input(Value* from, Value* to);

  // Attributes, kept as protobuf so every type (graphs, tensors, sparse tensors, type protos)
  // round-trips.
  const std::vector<onnx::AttributeProto>& attributes() const { return attrs_; }
  std::vector<onnx::AttributeProto>& mutable_attributes() { return attrs_; }
  const onnx::AttributeProto* attr(const std::string& name) const;
  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t dflt) const;
  float attr_float(const std::string& name, float dflt) const;
  std::string attr_string(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> dflt = {}) const;
  std::vector<float> attr_floats(const std::string& name, std::vector<float> dflt = {}) const;
  // A tensor attribute decoded (e.g. Constant's `value`); empty Tensor when absent.
  Tensor attr_tensor(const std::string& name) const;
  void set_attr(const std::string& name, int64_t v);
  void set_attr(const std::string& name, float v);
  void set_attr(const std::string& name, const std::string& v);
  void set_attr(const std::string& name, const std::vector<int64_t>& v);
  void set_attr(const std::string& name, const std::vector<float>& v);
  void set_attr(const onnx::AttributeProto& a);  // replaces any attribute of the same name
  void remove_attr(const std::string& name);

  // Names of the user's original nodes this node stands for (provenance, filled by passes). Empty
  // for an original node, which stands for itself.
  const std::vector<std::string>& provenance() const { return provenance_; }
  void add_provenance(const Node& replaced);
  void set_provenance(std::vector<std::string> originals) { provenance_ = std::move(originals); }
  // "node 'conv1' (Conv)" for error messages; uses the original name when this node came from a
  // pass.
  std::string describe() const;

  const std::string& doc_string() const { return shell_.doc_string(); }
  Graph* graph() const { return graph_; }
  // Remaining NodeProto fields (doc_string, unknown fields) for lossless export.
  const onnx::NodeProto& shell() const { return shell_; }

  // Unique within the process and never reused, unlike the node's address: lets pass statistics
  // tell a node created by a pass from a removed one whose memory was recycled.
  uint64_t serial() const { return serial_; }

 private:
  friend class Graph;
  friend class ModelIO;
  Node(Graph* g, std::string op_type, std::string domain)
      : graph_(g),
        op_type_(std::move(op_type)),
        domain_(std::move(domain)),
        serial_(next_serial()) {}
  static uint64_t next_serial();

  Graph* graph_;
  std::string name_;
  std::string op_type_;
  std::string domain_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Value*> implicit_inputs_;
  std::vector<onnx::AttributeProto> attrs_;
  std::vector<std::string> provenance_;
  uint64_t serial_;
  onnx::NodeProto shell_;
  std::list<std::unique_ptr<Node>>::iterator self_;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Nodes in topological order (the verifier checks it; topo_sort() restores it).
  class NodeRange {
   public:
    using It = std::list<std::unique_ptr<Node>>::const_iterator;
    struct Iter {
      It it;
      Node* operator*() const { return it->get(); }
      Iter& operator++() {
        ++it;
        return *this;
      }
      bool operator!=(const Iter& o) const { return it != o.it; }
      bool operator==(const Iter& o) const { return it == o.it; }
    };
    NodeRange(It b, It e) : b_(b), e_(e) {}
    Iter begin() const { return {b_}; }
    Iter end() const { return {e_}; }

   private:
    It b_, e_;
  };
  NodeRange nodes() const { return {nodes_.begin(), nodes_.end()}; }
  // A snapshot of the node pointers, safe to iterate while removing nodes.
  std::vector<Node*> node_list() const;
  size_t num_nodes() const { return nodes_.size(); }

  // Graph inputs as declared, in order. In IR < 4 models these include initializers (overridable
  // defaults); runtime_inputs() leaves those out.
  const std::vector<Value*>& inputs() const { return inputs_; }
  std::vector<Value*> runtime_inputs() const;
  const std::vector<Value*>& outputs() const { return outputs_; }  // in order
  // Initializers in their original order (new ones appended).
  std::vector<Value*> initializers() const;

  Value* find_value(const std::string& name) const;
  Value* find_node_output(const std::string& name) const;
  Node* find_node(const std::string& name) const;
  // A fresh value name starting with `hint` that no value or node uses yet.
  std::string unique_name(const std::string& hint);

  // Creates a node before `before` (or at the end when null). Output values are created with the
  // given names (made unique), or omitted where a name is empty.
  Node* add_node(const std::string& op_type, const std::vector<Value*>& inputs,
                 const std::vector<std::string>& output_names, const std::string& domain = "",
                 Node* before = nullptr);
  // Removes a node whose outputs have no uses and are not graph outputs; its inputs lose a use.
  void remove_node(Node* n);
  // Moves `n` to just before `before` (end when null). Callers keep the order topological.
  void move_node(Node* n, Node* before);
  // Redirects every use of `from` (graph output status included) to `to`. When `from` was a graph
  // output, `to` takes over its output entry (doc string, declared type) unless `to` is itself
  // already an output.
  void replace_all_uses(Value* from, Value* to);
  // Renames a value, e.g. so that a graph output keeps its name after the node producing it was
  // replaced. False (nothing changed) when `name` is taken. Subgraphs refer to outer values by name
  // and are not rewritten: the caller keeps the name of a value with implicit uses (Use::index <
  // 0).
  bool rename_value(Value* v, const std::string& name);

  Value* add_initializer(const std::string& name_hint, Tensor t);
  // Turns an initializer into... nothing: drops it (it must have no uses).
  void remove_initializer(Value* v);
  void remove_graph_input(Value* v);
  void set_outputs(std::vector<Value*> outputs);
  void add_input(Value* v);
  // Values that have a value_info entry (in the original order, new ones appended).
  const std::vector<Value*>& value_info() const { return value_info_; }
  void clear_value_info(Value* v);

  // Rebuilds the topological order (stable for already-ordered graphs); error names a node of a
  // cycle.
  bool topo_sort(std::string* error = nullptr);

  // opset_import of the enclosing model, in order.
  const std::vector<std::pair<std::string, int64_t>>& opset_imports() const { return opsets_; }
  int64_t opset(const std::string& domain) const;  // 0 when not imported
  // Adds a domain import (e.g. com.microsoft 1) if missing, or raises an older one to `version`.
  void require_opset(const std::string& domain, int64_t version);

  // GraphProto fields we do not model (name, doc_string, unknown fields).
  const onnx::GraphProto& shell() const { return shell_; }
  onnx::GraphProto& mutable_shell() { return shell_; }

  // Internal: creates or finds a value by name (import and builders).
  Value* get_or_create_value(const std::string& name);

 private:
  friend class ModelIO;
  friend class Node;
  void erase_use(Value* v, Node* n, int index);

  std::list<std::unique_ptr<Node>> nodes_;
  std::unordered_map<std::string, std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Value*> initializer_order_;
  std::vector<Value*> sparse_order_;
  std::vector<Value*> value_info_;
  std::vector<std::pair<std::string, int64_t>> opsets_;
  onnx::GraphProto shell_;
  uint64_t name_counter_ = 0;
};

// A model: the graph plus the ModelProto fields around it.
struct Model {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  // ModelProto with graph cleared except the shell; opset_import is authoritative in graph.
  onnx::ModelProto shell;
  // Folder of the file it came from (external data is resolved against it); empty for in-memory
  // models.
  std::string base_dir;
  std::string path;  // the file it came from, for error messages

  // metadata_props access (e.g. "xopt.memory_plan").
  std::optional<std::string> metadata(const std::string& key) const;
  void set_metadata(const std::string& key, const std::string& value);
};

}  // namespace xopt::ir
