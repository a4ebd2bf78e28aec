#include "executor/cpu/value.h"

#include <cstring>

#include "executor/cpu/broadcast.h"

namespace xopt::exec {

const char* kind_name(ExecValue::Kind k) {
  switch (k) {
    case ExecValue::Kind::kTensor:
      return "tensor";
    case ExecValue::Kind::kSequence:
      return "sequence";
    case ExecValue::Kind::kOptional:
      return "optional";
  }
  return "?";
}

ir::Tensor own_copy(const ir::Tensor& t) {
  if (t.dtype() == ir::DType::kString) return ir::Tensor::of_strings(t.dims(), t.strings());
  ir::Tensor c(t.dtype(), t.dims());
  if (t.nbytes() > 0) std::memcpy(c.mutable_raw_data(), t.raw_data(), t.nbytes());
  return c;
}

ExecValue ExecValue::of_tensor(ir::Tensor t) {
  ExecValue v;
  v.tensor_ = std::move(t);
  return v;
}

ExecValue ExecValue::of_sequence(std::vector<ir::Tensor> items, ir::DType elem_dtype) {
  ExecValue v;
  v.kind_ = Kind::kSequence;
  if (elem_dtype == ir::DType::kUndefined && !items.empty()) elem_dtype = items[0].dtype();
  v.items_ = std::move(items);
  v.elem_dtype_ = elem_dtype;
  return v;
}

ExecValue ExecValue::some(ExecValue element) {
  ExecValue v;
  v.kind_ = Kind::kOptional;
  v.element_kind_ = element.kind();
  v.elem_dtype_ = element.elem_dtype();
  v.element_ = std::make_shared<const ExecValue>(std::move(element));
  return v;
}

ExecValue ExecValue::none(Kind element_kind, ir::DType elem_dtype) {
  ExecValue v;
  v.kind_ = Kind::kOptional;
  v.element_kind_ = element_kind;
  v.elem_dtype_ = elem_dtype;
  return v;
}

std::string ExecValue::describe() const {
  switch (kind_) {
    case Kind::kTensor:
      return "tensor " + std::string(ir::dtype_name(tensor_.dtype())) +
             ir::dims_string(tensor_.dims());
    case Kind::kSequence:
      return "sequence of " + std::to_string(items_.size()) + " " +
             std::string(ir::dtype_name(elem_dtype_));
    case Kind::kOptional:
      if (element_ != nullptr) return "optional " + element_->describe();
      return "optional " + std::string(kind_name(element_kind_)) + " of " +
             std::string(ir::dtype_name(elem_dtype_)) + " (empty)";
  }
  return "?";
}

bool ExecValue::same_contents(const ExecValue& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kTensor:
      return tensor_.same_contents(o.tensor_);
    case Kind::kSequence:
      if (items_.size() != o.items_.size()) return false;
      for (size_t i = 0; i < items_.size(); ++i)
        if (!items_[i].same_contents(o.items_[i])) return false;
      return true;
    case Kind::kOptional:
      if (has_element() != o.has_element()) return false;
      return !has_element() || element_->same_contents(*o.element_);
  }
  return false;
}

}  // namespace xopt::exec
