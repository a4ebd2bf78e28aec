#include "tools/xopt/device.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "pipeline/cuda_session.h"
#include "tools/xopt/command.h"

#ifdef XOPT_WITH_CUDA
#include "executor/cuda/device_memory.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/prepare.h"
#include "executor/cuda/session.h"
#include "executor/cuda/shared_arena.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "planner/shared_arena.h"
#endif

namespace xopt::tool {

using pipeline::cuda_not_built;
#ifdef XOPT_WITH_CUDA
using pipeline::cuda_session_options;
#endif

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

std::function<Result<std::vector<ir::Tensor>>(const ir::Model&,
                                              const std::map<std::string, ir::Tensor>&)>
cuda_conformance_runner(const DeviceFlags& flags) {
#ifdef XOPT_WITH_CUDA
  cuda::SessionOptions o = cuda_session_options(flags);
  return [o](const ir::Model& m, const std::map<std::string, ir::Tensor>& in) {
    return cuda::run_once(m, in, o);
  };
#else
  (void)flags;
  return [](const ir::Model&,
            const std::map<std::string, ir::Tensor>&) -> Result<std::vector<ir::Tensor>> {
    return cuda_not_built();
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
  return report(cuda_not_built());
#endif
}

Result<CudaBench> bench_on_cuda(const ir::Model& model,
                                const std::map<std::string, ir::Tensor>& inputs,
                                const DeviceFlags& flags, int warmup, int iterations,
                                int profile_iterations) {
#ifdef XOPT_WITH_CUDA
  CudaBench b;
  std::vector<ir::Tensor> resident_out;
  XOPT_ASSIGN_OR_RETURN(auto offload, planner::read_offload(model));
  if (offload && !offload->weights.empty()) {
    // The unconstrained run first (every weight resident), in its own session, released before
    // the offloaded one loads.
    XOPT_ASSIGN_OR_RETURN(cuda::SessionOptions resident, cuda_session_options(flags, model));
    resident.ignore_offload = true;
    XOPT_ASSIGN_OR_RETURN(cuda::PreparedSession r, cuda::prepare_session(model, inputs, resident));
    for (int i = 0; i < warmup; ++i) XOPT_RETURN_IF_ERROR(r.session->run(inputs).status());
    for (int i = 0; i < iterations; ++i) {
      cuda::RunTiming t;
      XOPT_RETURN_IF_ERROR(r.session->run(inputs, &t).status());
      b.resident_gpu_ms.push_back(t.gpu_ms);
    }
    XOPT_ASSIGN_OR_RETURN(resident_out, r.session->run(inputs));
    b.offloaded = true;
    b.budget = offload->budget;
    b.offloaded_bytes = offload->offloaded_bytes;
    b.offloaded_weights = offload->weights.size();
    b.predicted_slowdown = offload->predicted_slowdown();
  }
  XOPT_ASSIGN_OR_RETURN(cuda::SessionOptions so, cuda_session_options(flags, model));
  XOPT_ASSIGN_OR_RETURN(cuda::PreparedSession p, cuda::prepare_session(model, inputs, so));
  for (int i = 0; i < warmup; ++i) XOPT_RETURN_IF_ERROR(p.session->run(inputs).status());
  const size_t before = cuda::DeviceBuffer::allocations();
  for (int i = 0; i < iterations; ++i) {
    cuda::RunTiming t;
    XOPT_RETURN_IF_ERROR(p.session->run(inputs, &t).status());
    b.gpu_ms.push_back(t.gpu_ms);
    b.host_ms.push_back(t.host_ms);
  }
  b.allocations_during_runs = cuda::DeviceBuffer::allocations() - before;
  if (b.offloaded) {
    XOPT_ASSIGN_OR_RETURN(std::vector<ir::Tensor> out, p.session->run(inputs));
    b.offload_outputs_equal = out.size() == resident_out.size();
    for (size_t k = 0; k < out.size() && b.offload_outputs_equal; ++k)
      b.offload_outputs_equal =
          out[k].nbytes() == resident_out[k].nbytes() &&
          std::memcmp(out[k].raw_data(), resident_out[k].raw_data(), out[k].nbytes()) == 0;
  }
  if (profile_iterations > 0) {
    XOPT_ASSIGN_OR_RETURN(std::vector<cuda::NodeTime> times,
                          p.session->profile(profile_iterations));
    for (cuda::NodeTime& t : times) b.profile.push_back({std::move(t.node), std::move(t.op), t.ms});
  }
  const cuda::Footprint& fp = p.session->footprint();
  b.memory = pipeline::measurement_of(fp);
  b.staging = fp.staging;
  b.device_total = fp.device_total();
  b.plan_parameters = planner::parameter_bytes(*model.graph, p.plan.alignment);
  b.plan = std::move(p.plan);
  b.plan_from_model = p.plan_from_model;
  return b;
#else
  (void)model, (void)inputs, (void)flags, (void)warmup, (void)iterations, (void)profile_iterations;
  return cuda_not_built();
#endif
}

#ifdef XOPT_WITH_CUDA
namespace {

// The one shared arena every model belongs to.
Result<planner::SharedArena> group_of(const std::vector<const ir::Model*>& models,
                                      const std::vector<std::string>& names) {
  std::optional<planner::SharedArena> group;
  for (size_t i = 0; i < models.size(); ++i) {
    XOPT_ASSIGN_OR_RETURN(auto rec, planner::read_shared_arena(*models[i]));
    if (!rec)
      return invalid_argument(names[i] + ": belongs to no shared arena (plan the group with " +
                              "`xopt --passes=...,plan --shared-arena ...`)");
    if (group && rec->id != group->id)
      return invalid_argument(names[i] + ": belongs to shared arena '" + rec->id + "', not '" +
                              group->id + "'");
    group = *rec;
  }
  if (!group) return invalid_argument("bench-group: no models");
  return *group;
}

// Solo first: each model alone, its own arena, for its outputs, time and separate footprint.
Status run_solo(const std::vector<const ir::Model*>& models, const std::vector<std::string>& names,
                const std::vector<std::map<std::string, ir::Tensor>>& inputs,
                const DeviceFlags& flags, CudaGroupBench& b,
                std::vector<std::vector<ir::Tensor>>& solo) {
  solo.resize(models.size());
  for (size_t i = 0; i < models.size(); ++i) {
    XOPT_ASSIGN_OR_RETURN(cuda::SessionOptions so, cuda_session_options(flags, *models[i]));
    XOPT_ASSIGN_OR_RETURN(cuda::PreparedSession p,
                          cuda::prepare_session(*models[i], inputs[i], so));
    auto out = p.session->run(inputs[i]);
    if (!out.is_ok()) return out.status().with_context(names[i] + " (solo): ");
    solo[i] = std::move(out).value();
    const cuda::Footprint& fp = p.session->footprint();
    GroupMember m;
    m.name = names[i];
    m.solo_total = fp.device_total();
    b.context = std::max(b.context, std::max(fp.context, fp.context_after_warmup));
    b.device = fp.device.summary();
    b.separate_total += m.solo_total;
    b.members.push_back(std::move(m));
  }
  b.separate_total += b.context * models.size();
  return Status::ok();
}

// Member i run in the group: its median GPU time and whether its outputs equal its solo run's.
Status time_member(cuda::Session& s, const std::map<std::string, ir::Tensor>& inputs,
                   const std::vector<ir::Tensor>& solo, const std::string& name, int warmup,
                   int iterations, GroupMember& m) {
  std::vector<double> ms;
  std::vector<ir::Tensor> last;
  for (int it = 0; it < warmup + iterations; ++it) {
    cuda::RunTiming t;
    auto out = s.run(inputs, &t);
    if (!out.is_ok()) return out.status().with_context(name + " (in the shared arena): ");
    if (it >= warmup) ms.push_back(t.gpu_ms);
    last = std::move(out).value();
  }
  std::sort(ms.begin(), ms.end());
  m.median_ms = ms.empty() ? 0.0 : ms[ms.size() / 2];
  m.outputs_equal_solo = last.size() == solo.size();
  for (size_t k = 0; k < last.size() && k < solo.size(); ++k)
    if (last[k].nbytes() != solo[k].nbytes() ||
        std::memcmp(last[k].raw_data(), solo[k].raw_data(), last[k].nbytes()) != 0) {
      m.outputs_equal_solo = false;
      m.difference += "output " + std::to_string(k) + " differs; ";
    }
  return Status::ok();
}

}  // namespace
#endif

Result<CudaGroupBench> bench_group_on_cuda(
    const std::vector<const ir::Model*>& models, const std::vector<std::string>& names,
    const std::vector<std::map<std::string, ir::Tensor>>& inputs, const DeviceFlags& flags,
    int warmup, int iterations) {
#ifdef XOPT_WITH_CUDA
  CudaGroupBench b;
  XOPT_ASSIGN_OR_RETURN(const planner::SharedArena group, group_of(models, names));
  b.id = group.id;
  std::vector<std::vector<ir::Tensor>> solo;
  XOPT_RETURN_IF_ERROR(run_solo(models, names, inputs, flags, b, solo));
  // The group: one arena and workspace, every member loaded, then each run in turn.
  XOPT_ASSIGN_OR_RETURN(const size_t before, cuda::Session::device_memory_used());
  XOPT_ASSIGN_OR_RETURN(auto arena, cuda::SharedDeviceArena::create(group));
  b.arena = group.arena_bytes;
  b.workspace = group.workspace_bytes;
  std::vector<cuda::PreparedSession> sessions;
  for (size_t i = 0; i < models.size(); ++i) {
    XOPT_ASSIGN_OR_RETURN(cuda::SessionOptions o, cuda_session_options(flags, *models[i]));
    o.shared_arena = arena;
    auto p = cuda::prepare_session(*models[i], inputs[i], o);
    if (!p.is_ok()) return p.status().with_context(names[i] + " (in the shared arena): ");
    sessions.push_back(std::move(p).value());
    const cuda::Footprint& fp = sessions.back().session->footprint();
    b.members[i].parameters = fp.parameters;
    b.members[i].io = fp.io;
    b.members[i].staging = fp.staging;
  }
  XOPT_ASSIGN_OR_RETURN(const size_t after, cuda::Session::device_memory_used());
  b.measured_shared = after - std::min(after, before);
  b.ours_shared = b.arena + b.workspace;
  for (const GroupMember& m : b.members) b.ours_shared += m.parameters + m.io + m.staging;
  for (size_t i = 0; i < models.size(); ++i)
    XOPT_RETURN_IF_ERROR(time_member(*sessions[i].session, inputs[i], solo[i], names[i], warmup,
                                     iterations, b.members[i]));
  return b;
#else
  (void)models, (void)names, (void)inputs, (void)flags, (void)warmup, (void)iterations;
  return cuda_not_built();
#endif
}

}  // namespace xopt::tool
