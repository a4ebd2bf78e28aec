// The kernel registry both executors use (executor/cpu/kernel.h, executor/cuda/kernel.h): kernels
// by domain, op type and opset range, added at static initialization by each kernel file's
// registration macro and looked up per node. `Def` is the executor's kernel record: any struct
// with `domain` ("" for the default domain), `op_type`, `since_version` and `until_version`
// (inclusive).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xopt::exec {

template <typename Def>
class KernelRegistryOf {
 public:
  // The process's registry of this executor's kernels.
  static KernelRegistryOf& global() {
    static KernelRegistryOf r;
    return r;
  }

  void add(Def def) { defs_.push_back(std::move(def)); }
  // The first kernel for (domain, op) that covers `opset` ("ai.onnx" is the default domain), or
  // nullptr.
  const Def* find(const std::string& domain, const std::string& op_type, int64_t opset) const {
    const std::string& d = domain == "ai.onnx" ? std::string() : domain;
    for (const Def& k : defs_)
      if (k.domain == d && k.op_type == op_type && opset >= k.since_version &&
          opset <= k.until_version)
        return &k;
    return nullptr;
  }
  const std::vector<Def>& all() const { return defs_; }

 private:
  std::vector<Def> defs_;
};

}  // namespace xopt::exec
