// Where the pipeline's models run and what the GPU measures for a planned model: `device` cpu (the
// reference executor) or cuda. In a build without the CUDA executor every CUDA request is an error
// saying so (never a silent fall back to the CPU).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/validate.h"
#include "ir/graph.h"
#include "pipeline/algorithm_choices.h"
#include "planner/memory_plan.h"

namespace xopt::pipeline {

// The device as the front ends give it (xopt's --device, --tf32, ...; the Python keywords).
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

// Usage errors: an unknown device, CUDA flags without --device cuda, --device cuda in a build
// without the CUDA executor, or a workspace size that does not parse.
Status check_device_flags(const DeviceFlags& flags);
// Whether this build has the CUDA executor.
bool cuda_built();
// The error every CUDA request gets in a build without the CUDA executor.
Status cuda_not_built();

// What the GPU measured for a planned model: the context (replacing the planner's estimate), the
// device, and the workspace each node's chosen algorithm needs (parallel to the plan's node order).
struct DeviceMeasurement {
  std::string device;  // DeviceInfo::summary()
  size_t context_bytes = 0;
  bool context_measured = true;  // false: the context predates xopt's session (Footprint)
  std::vector<size_t> node_workspace;
  // The algorithm each node chose (pipeline/algorithm_choices.h), and how many of them were a
  // choice stored in the model, taken without searching.
  AlgorithmChoices algorithms;
  size_t choices_reused = 0;
  size_t parameters = 0, arena = 0, workspace = 0, io = 0;
};
// Loads `model` (with its plan) on the GPU, compiling with a generous workspace limit so each node
// reports what its best algorithm needs (and, with `tune`, which algorithm the search chose).
Result<DeviceMeasurement> measure_on_cuda(const ir::Model& model, const planner::MemoryPlan& plan,
                                          const DeviceFlags& flags);

// Host-to-device bandwidth from pinned memory, measured on the GPU (the offload cost model).
struct Bandwidth {
  double bytes_per_ms = 0;
  std::string device;
};
Result<Bandwidth> measure_h2d_on_cuda();

// Runs `model` on the GPU on `inputs` (inside the plan it carries, else one made for these
// shapes), named like exec::run_for_validation's result; mode says "cuda (...)".
Result<exec::ModelOutputs> run_on_cuda(const ir::Model& model,
                                       const std::map<std::string, ir::Tensor>& inputs,
                                       const DeviceFlags& flags);

}  // namespace xopt::pipeline
