#include <chrono>

#include "passes/pass.h"

namespace xopt::passes {

void PassContext::count(std::string_view counter, int64_t n) {
  auto& counters = sink_ != nullptr ? *sink_ : own_counters_;
  auto it = counters.find(counter);
  if (it == counters.end()) it = counters.emplace(std::string(counter), 0).first;
  it->second += n;
}

Status PassContext::require_shapes(ir::Model& model) {
  if (shapes_valid_) return Status::ok();
  auto start = std::chrono::steady_clock::now();
  const auto& b = options_.shape_bindings;
  if (!b.input_shapes.empty() || b.batch)
    XOPT_RETURN_IF_ERROR(ir::bind_input_shapes(*model.graph, b));
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*model.graph));
  inference_runs_ += 1;
  inference_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  shapes_valid_ = true;
  return Status::ok();
}

}  // namespace xopt::passes
