// `--device cpu|cuda` and the CUDA executor as the tools use it: validation, conformance, the op
// list and the measured memory breakdown. In a build without the CUDA toolkit every CUDA request is
// an error saying so (never a silent fall back to the CPU).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/validate.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "planner/memory_plan.h"

namespace xopt::tool {

struct DeviceFlags {
  std::string device = "cpu";
  bool tf32 = false;      // allow TF32 math on the GPU (tolerances are then printed as such)
  bool tune = false;      // time candidate algorithms at load instead of trusting heuristics
  bool no_graph = false;  // replay the launch list directly instead of as a CUDA graph
  // Planning for the GPU: the most workspace one node's algorithm may take ("64MiB").
  std::string max_workspace = "64MiB";
  // Workspace in the arena: what each node may take even where the activations leave less free
  // (its algorithm's speed against the arena's peak).
  std::string min_workspace = "8MiB";
  bool cuda() const { return device == "cuda"; }
};

// Adds --device, --tf32, --tune, --no-graph, --max-workspace.
void add_device_flags(CLI::App& app, DeviceFlags& flags);
// Usage errors: an unknown device, CUDA flags without --device cuda, or --device cuda in a build
// without the CUDA executor.
Status check_device_flags(const DeviceFlags& flags);
// Whether this build has the CUDA executor.
bool cuda_built();

// Runs `model` on the GPU on `inputs` (inside the plan it carries, else one made for these
// shapes), named like exec::run_for_validation's result; mode says "cuda (...)".
Result<exec::ModelOutputs> run_on_cuda(const ir::Model& model,
                                       const std::map<std::string, ir::Tensor>& inputs,
                                       const DeviceFlags& flags);

// The conformance runner for the GPU (exec::conformance::Options::runner).
std::function<Result<std::vector<ir::Tensor>>(const ir::Model&,
                                              const std::map<std::string, ir::Tensor>&)>
cuda_conformance_runner(const DeviceFlags& flags);

// One line per op the CUDA executor claims (op, domain, opsets, types). Returns the exit code.
int list_cuda_ops();

// What the GPU measured for a planned model: the context (replacing the planner's estimate), the
// device, and the workspace each node's chosen algorithm needs (parallel to the plan's node order).
struct DeviceMeasurement {
  std::string device;  // DeviceInfo::summary()
  size_t context_bytes = 0;
  std::vector<size_t> node_workspace;
  size_t parameters = 0, arena = 0, workspace = 0, io = 0;
};
// Loads `model` (with its plan) on the GPU, compiling with a generous workspace limit so each node
// reports what its best algorithm needs.
Result<DeviceMeasurement> measure_on_cuda(const ir::Model& model, const planner::MemoryPlan& plan,
                                          const DeviceFlags& flags);

// Timed runs on the GPU: per-run GPU time (CUDA events around the replay) and host time, with the
// memory measured and the plan the run used.
// One node's mean GPU time in a profiled replay (`xopt bench --profile`).
struct NodeProfile {
  std::string node, op;
  double ms = 0;
};

struct CudaBench {
  std::vector<double> gpu_ms, host_ms;
  std::vector<NodeProfile> profile;  // per node, in execution order, when asked
  DeviceMeasurement memory;
  planner::MemoryPlan plan;
  size_t plan_parameters = 0;  // planner::parameter_bytes at the plan's alignment
  bool plan_from_model = false;
  size_t allocations_during_runs = 0;  // device allocations counted across the timed runs
};
Result<CudaBench> bench_on_cuda(const ir::Model& model,
                                const std::map<std::string, ir::Tensor>& inputs,
                                const DeviceFlags& flags, int warmup, int iterations,
                                int profile_iterations = 0);

}  // namespace xopt::tool
