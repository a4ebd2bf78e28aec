#include "executor/cuda/context_figure.h"

#include <mutex>

#include "executor/cuda/dynamic_library.h"

namespace xopt::cuda {

namespace {

std::mutex g_mutex;
std::optional<ContextFigure> g_first;

// The three driver entry points, from libcuda.so.1 (CUresult is an int, 0 is success; CUdevice
// an int).
struct Driver {
  int (*init)(unsigned) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*primary_state)(int, unsigned*, int*) = nullptr;
  bool ok = false;

  static const Driver& get() {
    static const Driver d = [] {
      static const DynamicLibrary lib("libcuda.so.1");
      Driver d;
      d.ok = lib.find("cuInit", &d.init) && lib.find("cuDeviceGet", &d.device_get) &&
             lib.find("cuDevicePrimaryCtxGetState", &d.primary_state) && d.init(0) == 0;
      return d;
    }();
    return d;
  }
};

}  // namespace

std::optional<bool> primary_context_active(int device) {
  const Driver& d = Driver::get();
  if (!d.ok) return std::nullopt;
  int dev = 0;
  unsigned flags = 0;
  int active = 0;
  if (d.device_get(&dev, device) != 0 || d.primary_state(dev, &flags, &active) != 0)
    return std::nullopt;
  return active != 0;
}

std::optional<ContextFigure> first_context_figure() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_first;
}

void record_first_context_figure(const ContextFigure& figure) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_first) g_first = figure;
}

ContextFigure context_figure(std::optional<bool> existed, const std::optional<ContextFigure>& first,
                             size_t delta, const std::string& how) {
  if (!existed.value_or(false)) return {delta, 0, how, true};
  if (first) {
    ContextFigure f = *first;
    f.source += "; the process's context, measured by the session that made it";
    return f;
  }
  return {delta, 0,
          "not measured: the context existed before this process's first xopt session (another "
          "library made it); the figure counts only what this session's handles added",
          false};
}

}  // namespace xopt::cuda
