#include "executor/cpu/kernel.h"

#include <cstring>

namespace xopt::exec {

Result<ir::Tensor*> KernelContext::output(size_t i, ir::DType dtype,
                                          const std::vector<int64_t>& dims) {
  return make_output(i, dtype, dims, /*zero=*/true);
}

Result<ir::Tensor*> KernelContext::output_uninit(size_t i, ir::DType dtype,
                                                 const std::vector<int64_t>& dims) {
  return make_output(i, dtype, dims, /*zero=*/false);
}

Result<ir::Tensor*> KernelContext::make_output(size_t i, ir::DType dtype,
                                               const std::vector<int64_t>& dims, bool zero) {
  if (i >= outputs_->size()) {  // an output the node omits entirely: scratch, then dropped
    scratch_.emplace_back(dtype, dims);
    return &scratch_.back();
  }
  const ir::Value* v = node_.output(i);
  if (v == nullptr || allocator_ == nullptr) {
    (*outputs_)[i] = ir::Tensor(dtype, dims);
  } else {
    auto t = allocator_->allocate(*v, dtype, dims, zero);
    if (!t.is_ok()) return t.status().with_context(node_.describe() + ": ");
    (*outputs_)[i] = std::move(t).value();
  }
  return &(*outputs_)[i];
}

Status KernelContext::forward(size_t i, const ir::Tensor& t) {
  if (i < outputs_->size() && node_.output(i) != nullptr && allocator_ != nullptr &&
      allocator_->can_forward()) {
    (*outputs_)[i] = t;
    return Status::ok();
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, output(i, t.dtype(), t.dims()));
  if (t.dtype() == ir::DType::kString) {
    y->mutable_strings() = t.strings();
  } else if (t.nbytes() > 0) {
    void* dst = y->mutable_raw_data();
    if (dst != t.raw_data()) std::memmove(dst, t.raw_data(), t.nbytes());
  }
  return Status::ok();
}

Status KernelContext::set_output_value(size_t i, ExecValue v) {
  if (v.is_tensor()) return forward(i, v.tensor());
  if (i >= node_.num_outputs() || node_.output(i) == nullptr) return Status::ok();
  value_outputs_[i] = std::move(v);
  return Status::ok();
}

std::optional<ExecValue> KernelContext::any_input(size_t i) const {
  if (const ExecValue* v = input_value(i)) return *v;
  if (const ir::Tensor* t = input(i)) return ExecValue::of_tensor(*t);
  return std::nullopt;
}

std::optional<ExecValue> KernelContext::any_implicit_input(size_t i) const {
  if (i < implicit_values_.size() && implicit_values_[i] != nullptr) return *implicit_values_[i];
  if (i < implicit_inputs_.size() && implicit_inputs_[i] != nullptr)
    return ExecValue::of_tensor(*implicit_inputs_[i]);
  return std::nullopt;
}

Status KernelContext::error(const std::string& message) const {
  return invalid_model(node_.describe() + ": " + message);
}

Status KernelContext::unsupported(const std::string& message) const {
  return ::xopt::unsupported(node_.describe() + ": " + message);
}

}  // namespace xopt::exec
