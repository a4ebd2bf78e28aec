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
#include "pipeline/device.h"
#include "planner/memory_plan.h"

namespace xopt::tool {

// The device flags, their checks and the GPU measurements of a planned model live in the
// pipeline library (pipeline/device.h); the tools use them by these names.
using pipeline::Bandwidth;
using pipeline::check_device_flags;
using pipeline::cuda_built;
using pipeline::DeviceFlags;
using pipeline::DeviceMeasurement;
using pipeline::measure_h2d_on_cuda;
using pipeline::measure_on_cuda;
using pipeline::run_on_cuda;

// Adds --device, --tf32, --tune, --no-graph, --max-workspace.
void add_device_flags(CLI::App& app, DeviceFlags& flags);
// The conformance runner for the GPU (exec::conformance::Options::runner).
std::function<Result<std::vector<ir::Tensor>>(const ir::Model&,
                                              const std::map<std::string, ir::Tensor>&)>
cuda_conformance_runner(const DeviceFlags& flags);

// One line per op the CUDA executor claims (op, domain, opsets, types). Returns the exit code.
int list_cuda_ops();

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
  // Parameter offload: the model's schedule (planner/offload.h) and, measured in the same call
  // with every weight resident, the unconstrained latency it is compared with.
  bool offloaded = false;
  size_t budget = 0, offloaded_bytes = 0, offloaded_weights = 0, staging = 0;
  size_t device_total = 0;  // our device bytes: parameters + arena + workspace + I/O + staging
  double predicted_slowdown = 1.0;
  std::vector<double> resident_gpu_ms;
  bool offload_outputs_equal = false;  // bitwise, every output, against the resident run
};
Result<CudaBench> bench_on_cuda(const ir::Model& model,
                                const std::map<std::string, ir::Tensor>& inputs,
                                const DeviceFlags& flags, int warmup, int iterations,
                                int profile_iterations = 0);

// Models planned to share one arena (`xopt --shared-arena`), loaded into one SharedDeviceArena on
// the GPU and run in turn; each also runs alone (its own arena) for its solo outputs and separate
// footprint. Memory is read on the device around the group's load.
struct GroupMember {
  std::string name;
  size_t parameters = 0, io = 0, staging = 0;  // the member's own device regions
  size_t solo_total = 0;  // its separate footprint: parameters + arena + workspace + io + staging
  double median_ms = 0;
  bool outputs_equal_solo = false;  // bitwise, every output
  std::string difference;           // when not equal
};
struct CudaGroupBench {
  std::string id, device;
  size_t arena = 0, workspace = 0;  // the group's, allocated once
  size_t context = 0;               // one context (measured by the first session)
  size_t ours_shared = 0;           // our allocations for the group: sum of members' + arena + ws
  size_t measured_shared = 0;       // device memory in use after the group loaded, minus before
  size_t separate_total = 0;        // sum of members' separate footprints, a context each
  std::vector<GroupMember> members;
};
Result<CudaGroupBench> bench_group_on_cuda(
    const std::vector<const ir::Model*>& models, const std::vector<std::string>& names,
    const std::vector<std::map<std::string, ir::Tensor>>& inputs, const DeviceFlags& flags,
    int warmup, int iterations);

}  // namespace xopt::tool
