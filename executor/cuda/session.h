// Runs a planned model on an NVIDIA GPU inside exactly the planned bytes.
//
// Load (Session::create): measure the CUDA context (cudaMemGetInfo around context and
// library-handle creation), make one device allocation each for the parameters, the activation
// arena (at the plan's offsets) and the workspace (the plan's size), plus one for graph inputs and
// outputs the plan keeps outside the arena; upload the weights; compile every node into a Launch
// bound to its slots (executor/cuda/kernel.h); capture the whole list, with the input and output
// copies, into a CUDA graph. Run: copy inputs into pinned staging, launch the graph, copy outputs
// out. Nothing is allocated or decided while running.
//
// Parameter offload (planner/offload.h, metadata "xopt.offload"): the weights the schedule names
// stay in one pinned host buffer instead of the parameter region; each is copied into its bytes of
// a device staging region on a second stream, after the compute stream has finished the step
// before its prefetch step (an event), and its first reader waits for the copy (another event).
// Both streams are captured into the one CUDA graph.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/shared_arena.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "planner/memory_plan.h"

namespace xopt::cuda {

// Whether a CUDA device can be used here; `why` says why not ("no CUDA device", the driver error).
bool device_available(std::string* why = nullptr);

// An unsupported error naming the first node whose op has no CUDA kernel at its opset.
Status check_kernels(const ir::Graph& graph);

struct DeviceInfo {
  std::string name;            // "NVIDIA H200"
  int compute_capability = 0;  // 90
  size_t total_memory = 0;
  int driver_version = 0;       // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;      // cudaRuntimeGetVersion
  size_t cudnn_version = 0;     // cudnnGetVersion, e.g. 91400
  std::string summary() const;  // "NVIDIA H200 (sm_90), driver 13.0, CUDA 13.0, cuDNN 9.14.0"
};

// Device memory as measured, in the four buckets (plus the I/O region for graph inputs and outputs
// that the plan keeps outside the arena).
struct Footprint {
  DeviceInfo device;
  // Device memory in use (total - free) after the context and library handles exist and before
  // any allocation of ours; `context_after_warmup` measures it again after the first run (lazily
  // loaded kernels included), minus our own allocations.
  size_t context = 0;
  size_t context_after_warmup = 0;
  std::string context_source;  // how it was measured (NVML excludes other processes' use)
  // False when the context existed before this process's first session (another library made
  // it): `context` is then only what the handles added (executor/cuda/context_figure.h).
  bool context_measured = true;
  size_t parameters = 0;  // the parameter region: every initializer, each aligned
  size_t arena = 0;       // the activation arena (plan.arena_bytes; with a shared arena, the part
                          // of the group's this plan uses: the group allocated it)
  size_t workspace = 0;   // the workspace region (plan.workspace_bytes)
  size_t io = 0;          // graph inputs/outputs outside the arena, and outputs nobody reads
  // Parameter offload: the device staging region, and the weights kept in pinned host memory
  // (parameters then counts only the resident ones).
  size_t staging = 0;
  size_t offloaded = 0;  // host bytes (pinned), aligned as in the schedule
  size_t offloaded_weights = 0;
  // Our own device bytes: parameters + arena (unless shared) + workspace + io + staging.
  size_t device_total() const { return parameters + arena + workspace + io + staging; }
  size_t device_allocations = 0;  // cudaMalloc calls made by the session (all at load)
  // Per node (parallel to the plan's node order): the workspace the chosen algorithm needs.
  std::vector<size_t> node_workspace;
  // By planner::node_key, each node whose kernel chose among algorithms: the choice, in its
  // kernel's words; and how many took a stored choice (SessionOptions::node_choices) unsearched.
  std::map<std::string, std::string> node_choice;
  size_t choices_reused = 0;
};

struct SessionOptions {
  CompileOptions compile;
  bool use_graph = true;  // capture the launch list into a CUDA graph (false: replay it directly)
  // Workspace each node may request. 0: the plan's workspace region (a node asking more is an
  // error naming it). Planning for the device (`xopt --device cuda`) compiles with a generous
  // limit and stores what each node asked.
  size_t workspace_limit = 0;
  // With workspace_limit: a smaller limit per node (parallel to the plan's node order), e.g. the
  // bytes the activations leave free at its step, so that its workspace raises no peak. A node
  // that needs more than its limit to run at all (attention's buffers) gets what it needs.
  std::vector<size_t> node_workspace_limit;
  // Run in this shared arena and workspace (planner/shared_arena.h) instead of allocating them:
  // the plan must fit (arena, workspace and alignment), and run() refuses while another session
  // holds it.
  std::shared_ptr<SharedDeviceArena> shared_arena;
  // Keep every weight on the device even when the model carries an offload schedule (the
  // unconstrained run an offloaded one is compared with).
  bool ignore_offload = false;
  // Algorithm choices an earlier load made (Footprint::node_choice, stored by `xopt --device cuda
  // --tune`), by planner::node_key: a node whose choice is still valid takes it without searching.
  std::map<std::string, std::string> node_choices;
};

// A tensor given by address, for Session::run_device: graph inputs read from it and graph outputs
// written to it. Any address CUDA can copy from or to (unified addressing): device memory (a
// DLPack CUDA tensor, say), pinned or pageable host memory. Dense, C order.
struct TensorRef {
  std::string name;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;
  void* data = nullptr;  // inputs are only read
};

// A graph input or output as planned: name, element type, dims.
struct IoSpec {
  std::string name;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;
  size_t nbytes() const;
};

// Per-run figures.
struct RunTiming {
  float gpu_ms = 0;    // between CUDA events around the graph launch (copies included)
  double host_ms = 0;  // wall time of run(), staging copies included
};

// One node's GPU time in a profiled replay (Session::profile).
struct NodeTime {
  std::string node;  // ir::Node::describe()
  std::string op;    // op type, "domain.Op" outside the default domain
  double ms = 0;     // mean over the profiled replays
};

class Session {
 public:
  // `plan` must be the model's plan (plan_from_json of metadata "xopt.memory_plan"), made for the
  // model's static shapes. The session keeps references to neither argument after create().
  static Result<std::unique_ptr<Session>> create(const ir::Model& model,
                                                 const planner::MemoryPlan& plan,
                                                 const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Named inputs in, graph outputs out (graph order). Shapes and dtypes must equal the planned ones
  // (an error names the input and dim otherwise).
  Result<std::vector<ir::Tensor>> run(const std::map<std::string, ir::Tensor>& inputs,
                                      RunTiming* timing = nullptr);

  // The same inference on tensors the caller holds, with no host staging: each input is copied
  // straight from its address into its planned slot (device-to-device for device memory) and each
  // output from its slot to the caller's address, around a second CUDA graph that holds the
  // launches alone (captured on first use). Work is ordered after what `stream` (the caller's,
  // e.g. PyTorch's current stream; nullptr: the legacy default stream) has queued so far, and
  // run_device returns when the outputs are written. Inputs: every graph input, by name, as
  // planned (input_specs()); outputs: one per graph output in graph order (output_specs()).
  Status run_device(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs,
                    void* stream = nullptr, RunTiming* timing = nullptr);
  std::vector<IoSpec> input_specs() const;
  std::vector<IoSpec> output_specs() const;
  // Bytes copied between host and device by the runs so far, inputs and outputs (offloaded
  // weights' prefetches not counted): what run_device with device tensors leaves at zero.
  size_t host_transfer_bytes() const;

  // Per-node GPU time: replays the launch list directly (not the CUDA graph) `iterations` times
  // with an event between every two launches, on the inputs of the last run(). The sum exceeds a
  // graph replay's time by the launch gaps the graph removes.
  Result<std::vector<NodeTime>> profile(int iterations);

  const Footprint& footprint() const;
  // Device memory in use right now (total - free), for before/after checks.
  static Result<size_t> device_memory_used();
  // Host-to-device copy bandwidth from pinned memory, in bytes per millisecond: `bytes` copied
  // `repeats` times on a fresh stream, timed with events (the offload planner's cost model).
  static Result<double> measure_h2d_bandwidth(size_t bytes = size_t{64} << 20, int repeats = 5);

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xopt::cuda
