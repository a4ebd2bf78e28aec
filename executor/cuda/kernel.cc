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

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry r;
  return r;
}

void KernelRegistry::add(KernelDef def) {
  defs_.push_back(std::move(def));
}

const KernelDef* KernelRegistry::find(const std::string& domain, const std::string& op_type,
                                      int64_t opset) const {
  const std::string& d = domain == "ai.onnx" ? std::string() : domain;
  for (const auto& k : defs_)
    if (k.domain == d && k.op_type == op_type && opset >= k.since_version &&
        opset <= k.until_version)
      return &k;
  return nullptr;
}

}  // namespace xopt::cuda
