// Run-time values of every ONNX type the executor runs: a tensor, a sequence of tensors, or an
// optional holding a tensor or a sequence (or nothing). Tensors stay ir::Tensor everywhere a
// kernel sees one; an ExecValue is what flows where an ONNX value may be something else: graph
// inputs and outputs (run_model_values), subgraph inputs and outputs, and the inputs and outputs
// of the Sequence*, Optional* and control-flow kernels (KernelContext::input_value,
// set_output_value).
//
// Copying an ExecValue shares the tensors' bytes, like copying a Tensor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace xopt::exec {

class ExecValue {
 public:
  enum class Kind { kTensor, kSequence, kOptional };

  ExecValue() = default;  // an empty tensor
  static ExecValue of_tensor(ir::Tensor t);
  // A sequence; `elem_dtype` is its element type, which an empty sequence needs.
  static ExecValue of_sequence(std::vector<ir::Tensor> items, ir::DType elem_dtype);
  // An optional holding `element` (a tensor or a sequence).
  static ExecValue some(ExecValue element);
  // An empty optional of a tensor or sequence (element_kind) of `elem_dtype`.
  static ExecValue none(Kind element_kind, ir::DType elem_dtype);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_optional() const { return kind_ == Kind::kOptional; }

  const ir::Tensor& tensor() const { return tensor_; }
  ir::Tensor& mutable_tensor() { return tensor_; }
  const std::vector<ir::Tensor>& items() const { return items_; }
  std::vector<ir::Tensor>& mutable_items() { return items_; }
  // Element type of a sequence, of an optional's content, or a tensor's dtype.
  ir::DType elem_dtype() const { return kind_ == Kind::kTensor ? tensor_.dtype() : elem_dtype_; }
  // Optional only: whether it holds a value, the value, and the kind it holds (or would hold).
  bool has_element() const { return element_ != nullptr; }
  const ExecValue& element() const { return *element_; }
  Kind element_kind() const { return element_kind_; }

  // "tensor float[2,3]", "sequence of 3 float", "optional sequence of float (empty)", for errors.
  std::string describe() const;
  // Same kind, same element types, same tensors (ir::Tensor::same_contents).
  bool same_contents(const ExecValue& o) const;

 private:
  Kind kind_ = Kind::kTensor;
  ir::Tensor tensor_;
  std::vector<ir::Tensor> items_;
  ir::DType elem_dtype_ = ir::DType::kUndefined;
  std::shared_ptr<const ExecValue> element_;
  Kind element_kind_ = Kind::kTensor;
};

const char* kind_name(ExecValue::Kind k);

// A copy of `t` with bytes of its own. Kernels that put an input tensor into a sequence or an
// optional take one: the input may be a slot of the memory plan's arena, which the plan hands to
// another value after the node, while the sequence lives on outside the plan.
ir::Tensor own_copy(const ir::Tensor& t);

}  // namespace xopt::exec
