// A shared library opened at run time, for the entry points the CUDA executor takes from
// libraries that no build or CI machine needs to link: the driver (libcuda, context_figure.cc),
// NVML (device_memory.cc) and cuBLASLt (cublaslt_lazy.cc, ~150 MiB mapped only when used).
//
//   static const DynamicLibrary lib("libnvidia-ml.so.1");
//   int (*init)() = nullptr;
//   const bool ok = lib.find("nvmlInit_v2", &init) && init() == 0;
#pragma once

#include <string>

namespace xopt::cuda {

class DynamicLibrary {
 public:
  // Opens `name` (dlopen, RTLD_NOW | RTLD_LOCAL). It stays open for the life of the process.
  explicit DynamicLibrary(std::string name);
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  bool is_open() const { return handle_ != nullptr; }
  const std::string& name() const { return name_; }
  // Why it could not be opened (dlerror's words); empty when open.
  const std::string& error() const { return error_; }

  // The address of `symbol`; nullptr when it is missing or the library is not open.
  void* address(const char* symbol) const;
  // Sets `*fn` to `symbol` as a function of type F; true when it was found.
  template <typename F>
  bool find(const char* symbol, F** fn) const {
    *fn = reinterpret_cast<F*>(address(symbol));
    return *fn != nullptr;
  }

 private:
  std::string name_;
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace xopt::cuda
