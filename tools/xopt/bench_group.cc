// `xopt bench-group A B C --device cuda`: models planned to share one activation arena
// (`xopt --passes=...,plan --shared-arena`) loaded into one arena on the GPU and run in turn: each
// member's outputs against its solo run (bitwise), its latency, and the device memory the group
// takes, measured, next to the shared plan's figure and the sum of the separate footprints.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "executor/cpu/model_inputs.h"
#include "ir/onnx_io.h"
#include "planner/annotate.h"
#include "planner/memory_breakdown.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "planner/shared_arena.h"
#include "tools/xopt/command.h"
#include "tools/xopt/device.h"

namespace xopt::tool {
namespace {

struct GroupCommand {
  std::vector<std::string> models;
  DeviceFlags device;
  int warmup = 5;
  int iterations = 50;
  std::string json;
};

int run_bench_group(const GroupCommand& c) {
  if (Status st = check_device_flags(c.device); !st.is_ok()) return report(st);
  if (!c.device.cuda())
    return report_error(kExitUsage, "bench-group runs on the GPU: give --device cuda");
  if (c.warmup < 0 || c.iterations <= 0)
    return report_error(kExitUsage, "--warmup must be >= 0 and --iterations > 0");
  std::vector<ir::Model> models;
  std::vector<std::map<std::string, ir::Tensor>> inputs;
  // The shared plan's device total (planner/shared_arena.h): every member's resident parameters,
  // staging and I/O, and the group's arena and workspace.
  size_t plan_shared_regions = 0;
  for (const std::string& path : c.models) {
    auto m = ir::load_model(path);
    if (!m.is_ok()) return report(m.status(), path);
    auto b = planner::memory_breakdown(*m);
    if (!b.is_ok()) return report(b.status(), path);
    plan_shared_regions += b->parameters + b->staging + b->io;
    auto in = exec::random_inputs(*m->graph, {}, nullptr);
    if (!in.is_ok()) return report(in.status(), path);
    inputs.push_back(std::move(in).value());
    models.push_back(std::move(m).value());
  }
  std::vector<const ir::Model*> ptrs;
  ptrs.reserve(models.size());
  for (const ir::Model& m : models) ptrs.push_back(&m);
  auto r = bench_group_on_cuda(ptrs, c.models, inputs, c.device, c.warmup, c.iterations);
  if (!r.is_ok()) return report(r.status());
  plan_shared_regions += r->arena + r->workspace;
  using planner::human_bytes;
  std::printf("device     %s\n", r->device.c_str());
  std::printf("shared arena '%s': arena %s, workspace %s (allocated once)\n", r->id.c_str(),
              human_bytes(r->arena).c_str(), human_bytes(r->workspace).c_str());
  nlohmann::json j;
  j["id"] = r->id;
  j["device"] = r->device;
  bool all_equal = true;
  for (const GroupMember& m : r->members) {
    std::printf("  %-40s parameters %12s  median %8.4f ms  outputs %s\n", m.name.c_str(),
                human_bytes(m.parameters).c_str(), m.median_ms,
                m.outputs_equal_solo ? "equal to its solo run" : m.difference.c_str());
    all_equal = all_equal && m.outputs_equal_solo;
    j["members"].push_back({{"model", m.name},
                            {"parameters", m.parameters},
                            {"io", m.io},
                            {"solo_total", m.solo_total},
                            {"median_ms", m.median_ms},
                            {"outputs_equal_solo", m.outputs_equal_solo}});
  }
  const size_t shared_with_context = r->ours_shared + r->context;
  std::printf("memory (context excluded unless said)\n");
  std::printf("  %-44s %14zu  %12s\n", "shared plan: device total", plan_shared_regions,
              human_bytes(plan_shared_regions).c_str());
  std::printf("  %-44s %14zu  %12s  %s\n", "ours, allocated (with I/O and staging)", r->ours_shared,
              human_bytes(r->ours_shared).c_str(),
              r->ours_shared == plan_shared_regions ? "(equal)" : "(DIFFERS from the plan)");
  std::printf("  %-44s %14zu  %12s  (library handles per session included)\n",
              "measured on the device around the load", r->measured_shared,
              human_bytes(r->measured_shared).c_str());
  std::printf("  %-44s %14zu  %12s\n", "shared, with one context", shared_with_context,
              human_bytes(shared_with_context).c_str());
  std::printf("  %-44s %14zu  %12s  (each with its own arena and context)\n", "separate, summed",
              r->separate_total, human_bytes(r->separate_total).c_str());
  std::printf("shared / separate: %.3f\n", r->separate_total > 0
                                               ? static_cast<double>(shared_with_context) /
                                                     static_cast<double>(r->separate_total)
                                               : 0.0);
  j["arena"] = r->arena;
  j["workspace"] = r->workspace;
  j["context"] = r->context;
  j["plan_shared_regions"] = plan_shared_regions;
  j["ours_shared"] = r->ours_shared;
  j["measured_shared"] = r->measured_shared;
  j["shared_with_context"] = shared_with_context;
  j["separate_total"] = r->separate_total;
  if (!c.json.empty() && !write_file_atomically(c.json, j.dump(2) + "\n").is_ok())
    return report_error(kExitBadModel, c.json + ": cannot write");
  return all_equal ? kExitOk : kExitUsage;  // a mismatch exits 1, as `xopt validate`
}

std::function<int()> setup_bench_group(CLI::App& sub) {
  auto c = std::make_shared<GroupCommand>();
  sub.add_option("models", c->models,
                 "The members of one shared arena (outputs of `xopt --shared-arena`)")
      ->required()
      ->expected(1, -1);
  add_device_flags(sub, c->device);
  sub.add_option("--warmup", c->warmup, "Untimed runs of each member first (default 5)");
  sub.add_option("--iterations", c->iterations, "Timed runs of each member (default 50)");
  sub.add_option("--json", c->json, "Also write the figures as JSON");
  return [c] { return run_bench_group(*c); };
}

}  // namespace

XOPT_SUBCOMMAND("bench-group",
                "runs models that share one activation arena on the GPU, in turn, and measures "
                "the group's memory against the separate footprints",
                setup_bench_group);

}  // namespace xopt::tool
