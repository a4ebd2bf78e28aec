// The CUDA context belongs to the process, and every session shares it, so its cost can be
// measured only by the session that creates it (device memory in use before and after). Later
// sessions report that first figure. A context another library made first (PyTorch in the same
// process) cannot be measured: the footprint says so, rather than passing off the few MiB the
// session's own handles add as the context.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace xopt::cuda {

struct ContextFigure {
  size_t bytes = 0;         // once the context and the library handles exist
  size_t after_warmup = 0;  // again after the first run (lazily loaded kernels)
  std::string source;       // how it was measured, or why it was not
  bool measured = true;
};

// Whether GPU `device`'s primary context exists in this process yet: the driver's
// cuDevicePrimaryCtxGetState, loaded at run time (no build machine needs the driver). nullopt
// when the driver cannot say.
std::optional<bool> primary_context_active(int device);

// What the session that created this process's context measured: recorded once, by it.
std::optional<ContextFigure> first_context_figure();
void record_first_context_figure(const ContextFigure& figure);

// The figure a session reports. `existed`: whether the context was there before the session
// (nullopt: unknown, taken as not); `first`: the recorded figure; `delta`: what the session
// measured above its own baseline, by the method `how`.
ContextFigure context_figure(std::optional<bool> existed, const std::optional<ContextFigure>& first,
                             size_t delta, const std::string& how);

}  // namespace xopt::cuda
