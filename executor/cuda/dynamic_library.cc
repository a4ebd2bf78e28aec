#include "executor/cuda/dynamic_library.h"

#include <dlfcn.h>

#include <utility>

namespace xopt::cuda {

DynamicLibrary::DynamicLibrary(std::string name) : name_(std::move(name)) {
  handle_ = dlopen(name_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* e = dlerror();
    error_ = e != nullptr ? e : "unknown error";
  }
}

void* DynamicLibrary::address(const char* symbol) const {
  return handle_ != nullptr ? dlsym(handle_, symbol) : nullptr;
}

}  // namespace xopt::cuda
