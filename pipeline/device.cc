#include "pipeline/device.h"

#include <algorithm>
#include <memory>

#include "pipeline/cuda_session.h"
#include "pipeline/parse.h"

#ifdef XOPT_WITH_CUDA
#include <cuda_runtime.h>

#include "executor/cuda/prepare.h"
#include "planner/planner.h"
#endif

namespace xopt::pipeline {

Status cuda_not_built() {
  return unsupported(
      "--device cuda: this xopt was built without the CUDA executor (no CUDA toolkit when it was "
      "configured)");
}

bool cuda_built() {
#ifdef XOPT_WITH_CUDA
  return true;
#else
  return false;
#endif
}

Status check_device_flags(const DeviceFlags& flags) {
  if (flags.device != "cpu" && flags.device != "cuda")
    return invalid_argument("--device must be cpu or cuda, not '" + flags.device + "'");
  if (!flags.cuda() && (flags.tf32 || flags.tune || flags.no_graph))
    return invalid_argument("--tf32, --tune and --no-graph apply to --device cuda only");
  if (flags.cuda() && !cuda_built()) return invalid_argument(cuda_not_built().message());
  if (auto size = parse_size(flags.max_workspace); !size.is_ok())
    return invalid_argument("--max-workspace: " + size.status().message());
  if (auto size = parse_size(flags.min_workspace); !size.is_ok())
    return invalid_argument("--min-workspace: " + size.status().message());
  return Status::ok();
}

#ifdef XOPT_WITH_CUDA
cuda::SessionOptions cuda_session_options(const DeviceFlags& flags) {
  cuda::SessionOptions o;
  o.compile.tf32 = flags.tf32;
  o.compile.tune = flags.tune;
  o.use_graph = !flags.no_graph;
  return o;
}

Result<cuda::SessionOptions> cuda_session_options(const DeviceFlags& flags,
                                                  const ir::Model& model) {
  cuda::SessionOptions o = cuda_session_options(flags);
  if (flags.tune) return o;
  auto stored = read_algorithm_choices(model);
  if (!stored.is_ok())
    return stored.status().with_context((model.path.empty() ? "model" : model.path) + ": ");
  o.node_choices = std::move(stored->nodes);
  return o;
}

DeviceMeasurement measurement_of(const cuda::Footprint& fp) {
  DeviceMeasurement m;
  m.device = fp.device.summary() + "; context " + fp.context_source;
  m.context_bytes = std::max(fp.context, fp.context_after_warmup);
  m.context_measured = fp.context_measured;
  m.node_workspace = fp.node_workspace;
  m.parameters = fp.parameters;
  m.arena = fp.arena;
  m.workspace = fp.workspace;
  m.io = fp.io;
  m.algorithms.device = fp.device.summary();
  m.algorithms.nodes = fp.node_choice;
  m.choices_reused = fp.choices_reused;
  return m;
}
#endif

Result<DeviceMeasurement> measure_on_cuda(const ir::Model& model, const planner::MemoryPlan& plan,
                                          const DeviceFlags& flags) {
#ifdef XOPT_WITH_CUDA
  XOPT_ASSIGN_OR_RETURN(cuda::SessionOptions o, cuda_session_options(flags, model));
  // Each node takes its best algorithm within max_workspace; the plan's workspace region is then
  // sized from what they chose.
  XOPT_ASSIGN_OR_RETURN(o.workspace_limit, parse_size(flags.max_workspace));
  // Workspace in the arena: a node's workspace should take only bytes the activations leave free
  // at its step, or it raises the arena (the peak's nodes run without, where they can).
  if (plan.workspace_in_arena) {
    XOPT_ASSIGN_OR_RETURN(const size_t floor, parse_size(flags.min_workspace));
    o.node_workspace_limit = planner::activation_slack(plan);
    for (size_t& limit : o.node_workspace_limit) limit = std::max(limit, floor);
  }
  XOPT_ASSIGN_OR_RETURN(std::unique_ptr<cuda::Session> s, cuda::Session::create(model, plan, o));
  return measurement_of(s->footprint());
#else
  (void)model, (void)plan, (void)flags;
  return cuda_not_built();
#endif
}

Result<Bandwidth> measure_h2d_on_cuda() {
#ifdef XOPT_WITH_CUDA
  std::string why;
  if (!cuda::device_available(&why)) return unsupported("measuring bandwidth: " + why);
  XOPT_ASSIGN_OR_RETURN(const double bpm, cuda::Session::measure_h2d_bandwidth());
  cudaDeviceProp prop{};
  const std::string name =
      cudaGetDeviceProperties(&prop, 0) == cudaSuccess ? prop.name : std::string("GPU 0");
  return Bandwidth{bpm, name};
#else
  return cuda_not_built();
#endif
}

Result<exec::ModelOutputs> run_on_cuda(const ir::Model& model,
                                       const std::map<std::string, ir::Tensor>& inputs,
                                       const DeviceFlags& flags) {
#ifdef XOPT_WITH_CUDA
  const ir::Graph& g = *model.graph;
  std::map<std::string, ir::Tensor> feeds;
  for (const auto& [name, t] : inputs) {
    const ir::Value* v = g.find_value(name);
    if (v != nullptr && v->is_graph_input()) feeds[name] = t;
  }
  XOPT_ASSIGN_OR_RETURN(cuda::SessionOptions so, cuda_session_options(flags, model));
  XOPT_ASSIGN_OR_RETURN(cuda::PreparedSession p, cuda::prepare_session(model, feeds, so));
  const std::string where = model.path.empty() ? std::string("model") : model.path;
  auto res = p.session->run(feeds);
  if (!res.is_ok()) return res.status().with_context(where + " (on the GPU): ");
  exec::ModelOutputs out;
  for (const ir::Value* v : g.outputs()) out.names.push_back(v->name());
  out.tensors = std::move(res).value();
  out.mode = std::string("cuda") + (flags.tf32 ? ", TF32" : "") + ", " +
             (p.plan_from_model ? "its memory plan, " : "a plan made for these inputs, ") +
             std::to_string(p.plan.arena_bytes) + " bytes";
  return out;
#else
  (void)model, (void)inputs, (void)flags;
  return cuda_not_built();
#endif
}

}  // namespace xopt::pipeline
