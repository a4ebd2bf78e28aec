#include "tools/xopt/device.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "tools/xopt/command.h"

#ifdef XOPT_WITH_CUDA
#include "executor/cuda/device_memory.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/prepare.h"
#include "executor/cuda/session.h"
#include "planner/planner.h"
#endif

namespace xopt::tool {

namespace {

Status not_built() {
  return unsupported(
      "--device cuda: this xopt was built without the CUDA executor (no CUDA toolkit when it was "
      "configured)");
}

#ifdef XOPT_WITH_CUDA
cuda::SessionOptions session_options(const DeviceFlags& flags) {
  cuda::SessionOptions o;
  o.compile.tf32 = flags.tf32;
  o.compile.tune = flags.tune;
  o.use_graph = !flags.no_graph;
  return o;
}
#endif

}  // namespace

void add_device_flags(CLI::App& app, DeviceFlags& flags) {
  app.add_option("--device", flags.device,
                 "Where models run: cpu (the reference executor) or cuda (the CUDA executor, "
                 "inside the memory plan; planning then sizes the workspace from the GPU's "
                 "algorithms and measures the CUDA context)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_flag("--tf32", flags.tf32,
               "Allow TF32 tensor-core math for fp32 on the GPU (off by default)");
  app.add_flag("--tune", flags.tune,
               "Time the candidate algorithms once at load instead of trusting cuDNN's heuristics");
  app.add_flag("--no-graph", flags.no_graph,
               "Replay the launch list directly instead of as a CUDA graph (debugging)");
  app.add_option("--max-workspace", flags.max_workspace,
                 "Planning with --device cuda: the most workspace one node's algorithm may take "
                 "(default 64MiB; faster algorithms often want more)");
  app.add_option("--min-workspace", flags.min_workspace,
                 "Planning with --device cuda (workspace in the arena): a node's workspace takes "
                 "the bytes the activations leave free at its step, and at least this much "
                 "(default 8MiB), which may raise the arena's peak by as much");
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
  if (flags.cuda() && !cuda_built()) return invalid_argument(not_built().message());
  if (auto size = parse_size(flags.max_workspace); !size.is_ok())
    return invalid_argument("--max-workspace: " + size.status().message());
  if (auto size = parse_size(flags.min_workspace); !size.is_ok())
    return invalid_argument("--min-workspace: " + size.status().message());
  return Status::ok();
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
  XOPT_ASSIGN_OR_RETURN(cuda::PreparedSession p,
                        cuda::prepare_session(model, feeds, session_options(flags)));
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
  return not_built();
#endif
}

std::function<Result<std::vector<ir::Tensor>>(const ir::Model&,
                                              const std::map<std::string, ir::Tensor>&)>
cuda_conformance_runner(const DeviceFlags& flags) {
#ifdef XOPT_WITH_CUDA
  cuda::SessionOptions o = session_options(flags);
  return [o](const ir::Model& m, const std::map<std::string, ir::Tensor>& in) {
    return cuda::run_once(m, in, o);
  };
#else
  (void)flags;
  return [](const ir::Model&,
            const std::map<std::string, ir::Tensor>&) -> Result<std::vector<ir::Tensor>> {
    return not_built();
  };
#endif
}

int list_cuda_ops() {
#ifdef XOPT_WITH_CUDA
  std::map<std::pair<std::string, std::string>, std::vector<const cuda::KernelDef*>> ops;
  for (const cuda::KernelDef& k : cuda::KernelRegistry::global().all())
    ops[{k.domain.empty() ? "ai.onnx" : k.domain, k.op_type}].push_back(&k);
  size_t width = 0;
  for (const auto& [key, defs] : ops) width = std::max(width, key.second.size());
  for (auto& [key, defs] : ops) {
    std::sort(defs.begin(), defs.end(), [](const cuda::KernelDef* a, const cuda::KernelDef* b) {
      return a->since_version < b->since_version;
    });
    std::string ranges, types;
    for (const cuda::KernelDef* k : defs) {
      ranges += (ranges.empty() ? "" : ", ") + std::to_string(k->since_version) + "-" +
                std::to_string(k->until_version);
      if (types.find(k->types) == std::string::npos)
        types += (types.empty() ? "" : "; ") + k->types;
    }
    std::printf("%-*s  %-13s  opset %-12s  %s\n", static_cast<int>(width), key.second.c_str(),
                key.first.c_str(), ranges.c_str(), types.c_str());
  }
  std::fputs(
      "the CUDA executor needs static shapes (plan with --input-shape or --batch); the types "
      "column is what each claim covers\n",
      stderr);
  return kExitOk;
#else
  return report(not_built());
#endif
}

Result<DeviceMeasurement> measure_on_cuda(const ir::Model& model, const planner::MemoryPlan& plan,
                                          const DeviceFlags& flags) {
#ifdef XOPT_WITH_CUDA
  cuda::SessionOptions o = session_options(flags);
  // Each node takes its best algorithm within --max-workspace; the plan's workspace region is
  // then sized from what they chose.
  XOPT_ASSIGN_OR_RETURN(o.workspace_limit, parse_size(flags.max_workspace));
  // Workspace in the arena: a node's workspace should take only bytes the activations leave free
  // at its step, or it raises the arena (the peak's nodes run without, where they can).
  if (plan.workspace_in_arena) {
    XOPT_ASSIGN_OR_RETURN(const size_t floor, parse_size(flags.min_workspace));
    o.node_workspace_limit = planner::activation_slack(plan);
    for (size_t& limit : o.node_workspace_limit) limit = std::max(limit, floor);
  }
  XOPT_ASSIGN_OR_RETURN(std::unique_ptr<cuda::Session> s, cuda::Session::create(model, plan, o));
  const cuda::Footprint& fp = s->footprint();
  DeviceMeasurement m;
  m.device = fp.device.summary() + "; context " + fp.context_source;
  m.context_bytes = std::max(fp.context, fp.context_after_warmup);
  m.node_workspace = fp.node_workspace;
  m.parameters = fp.parameters;
  m.arena = fp.arena;
  m.workspace = fp.workspace;
  m.io = fp.io;
  return m;
#else
  (void)model, (void)plan, (void)flags;
  return not_built();
#endif
}

Result<CudaBench> bench_on_cuda(const ir::Model& model,
                                const std::map<std::string, ir::Tensor>& inputs,
                                const DeviceFlags& flags, int warmup, int iterations,
                                int profile_iterations) {
#ifdef XOPT_WITH_CUDA
  XOPT_ASSIGN_OR_RETURN(cuda::PreparedSession p,
                        cuda::prepare_session(model, inputs, session_options(flags)));
  CudaBench b;
  for (int i = 0; i < warmup; ++i) XOPT_RETURN_IF_ERROR(p.session->run(inputs).status());
  const size_t before = cuda::DeviceBuffer::allocations();
  for (int i = 0; i < iterations; ++i) {
    cuda::RunTiming t;
    XOPT_RETURN_IF_ERROR(p.session->run(inputs, &t).status());
    b.gpu_ms.push_back(t.gpu_ms);
    b.host_ms.push_back(t.host_ms);
  }
  b.allocations_during_runs = cuda::DeviceBuffer::allocations() - before;
  if (profile_iterations > 0) {
    XOPT_ASSIGN_OR_RETURN(std::vector<cuda::NodeTime> times,
                          p.session->profile(profile_iterations));
    for (cuda::NodeTime& t : times) b.profile.push_back({std::move(t.node), std::move(t.op), t.ms});
  }
  const cuda::Footprint& fp = p.session->footprint();
  b.memory.device = fp.device.summary() + "; context " + fp.context_source;
  b.memory.context_bytes = std::max(fp.context, fp.context_after_warmup);
  b.memory.node_workspace = fp.node_workspace;
  b.memory.parameters = fp.parameters;
  b.memory.arena = fp.arena;
  b.memory.workspace = fp.workspace;
  b.memory.io = fp.io;
  b.plan_parameters = planner::parameter_bytes(*model.graph, p.plan.alignment);
  b.plan = std::move(p.plan);
  b.plan_from_model = p.plan_from_model;
  return b;
#else
  (void)model, (void)inputs, (void)flags, (void)warmup, (void)iterations, (void)profile_iterations;
  return not_built();
#endif
}

}  // namespace xopt::tool
