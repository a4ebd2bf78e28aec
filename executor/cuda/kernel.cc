#include "executor/cuda/kernel.h"

namespace xopt::cuda {

int64_t DeviceTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

size_t DeviceTensor::nbytes() const {
  return static_cast<size_t>(numel()) * ir::dtype_size(dtype);
}

Status CompileContext::error(const std::string& message) const {
  return invalid_model(node_.describe() + ": " + message);
}

Status CompileContext::unsupported(const std::string& message) const {
  return ::xopt::unsupported(node_.describe() + ": " + message);
}

}  // namespace xopt::cuda
