#include "tools/xopt/shared_arena.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "onnx/onnx_pb.h"
#include "planner/annotate.h"
#include "planner/report.h"
#include "planner/shared_arena.h"
#include "tools/xopt/command.h"
#include "viz/breakdown.h"

namespace xopt::tool {
namespace {

namespace fs = std::filesystem;

// The .onnx file's protobuf alone: its external data is neither read nor touched.
Result<onnx::ModelProto> read_proto(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot read");
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes.str())) return invalid_model(path + ": not an ONNX model");
  return m;
}

// The memory plan stored in the model at `path`.
Result<planner::MemoryPlan> read_file_plan(const std::string& path) {
  XOPT_ASSIGN_OR_RETURN(onnx::ModelProto m, read_proto(path));
  for (const auto& p : m.metadata_props())
    if (p.key() == planner::kPlanMetadataKey) return planner::plan_from_json(p.value());
  return invalid_model(path + ": carries no memory plan");
}

// Adds (or replaces) one metadata_props entry of the .onnx file at `path` without touching its
// external data: the protobuf is read, changed and written to a temporary file renamed over it.
Status set_file_metadata(const std::string& path, const std::string& key,
                         const std::string& value) {
  XOPT_ASSIGN_OR_RETURN(onnx::ModelProto m, read_proto(path));
  bool found = false;
  for (auto& p : *m.mutable_metadata_props())
    if (p.key() == key) {
      p.set_value(value);
      found = true;
    }
  if (!found) {
    auto* p = m.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  return write_file_atomically(path, [&](std::ostream& os) { return m.SerializeToOstream(&os); });
}

}  // namespace

int finish_shared_arena(const std::vector<std::string>& models,
                        const std::vector<std::string>& outputs, const std::string& report_dir,
                        bool quiet) {
  std::vector<std::string> names;
  std::vector<planner::MemoryPlan> plans;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto p = read_file_plan(outputs[i]);
    if (!p.is_ok()) return report(p.status(), outputs[i]);
    plans.push_back(std::move(p).value());
    std::string name = fs::path(models[i]).stem().string();
    for (const std::string& n : names)
      if (n == name) name = models[i];  // two files of the same name: the paths tell them apart
    names.push_back(name);
  }
  std::vector<const planner::MemoryPlan*> ptrs;
  ptrs.reserve(plans.size());
  for (const planner::MemoryPlan& p : plans) ptrs.push_back(&p);
  auto shared = planner::share_arena(names, ptrs);
  if (!shared.is_ok()) return report(shared.status());
  for (const std::string& out : outputs) {
    Status st = set_file_metadata(out, planner::kSharedArenaMetadataKey,
                                  planner::shared_arena_to_json(*shared));
    if (!st.is_ok()) return report(st, out);
  }
  const planner::SharedArenaFigures f = planner::shared_arena_figures(*shared, ptrs);
  nlohmann::json j;
  j["format"] = "xopt.shared_arena_report";
  j["version"] = 1;
  j["group"] = nlohmann::json::parse(planner::shared_arena_to_json(*shared));
  std::printf("shared arena %s: %zu models that run one at a time on one GPU\n", shared->id.c_str(),
              names.size());
  std::printf("  %-24s %14s %14s %14s %14s\n", "model", "parameters", "arena", "workspace",
              "alone (total)");
  for (size_t i = 0; i < names.size(); ++i) {
    const planner::MemoryPlan& p = plans[i];
    std::printf("  %-24s %14zu %14zu %14zu %14zu\n", names[i].c_str(), p.breakdown.parameters,
                p.arena_bytes, p.workspace_bytes, f.member_totals[i]);
    j["members"].push_back({{"name", names[i]},
                            {"output", outputs[i]},
                            {"parameters", p.breakdown.parameters},
                            {"arena", p.arena_bytes},
                            {"workspace", p.workspace_bytes},
                            {"context", p.breakdown.cuda_context},
                            {"context_estimated", p.breakdown.cuda_context_estimated},
                            {"total_alone", f.member_totals[i]}});
  }
  std::printf("  %-24s %14zu %14zu %14zu %14s\n", "shared", f.parameters, shared->arena_bytes,
              shared->workspace_bytes, "");
  std::printf(
      "  shared total   %14zu  %12s  (parameters + largest arena + largest workspace + "
      "one context of %s)\n",
      f.shared_total, planner::human_bytes(f.shared_total).c_str(),
      planner::human_bytes(f.context).c_str());
  std::printf(
      "  separate total %14zu  %12s  (each model with its own arena, workspace and "
      "context)\n",
      f.separate_total, planner::human_bytes(f.separate_total).c_str());
  j["shared_total"] = f.shared_total;
  j["separate_total"] = f.separate_total;
  j["parameters"] = f.parameters;
  j["context"] = f.context;
  if (!report_dir.empty()) {
    const std::string path = (fs::path(report_dir) / "shared_arena.json").string();
    if (!write_file_atomically(path, j.dump(2) + "\n").is_ok())
      return report_error(kExitBadModel, path + ": cannot write");
    if (!quiet) std::printf("wrote %s\n", path.c_str());
    // The bars: each member alone, the members summed, the group.
    std::vector<viz::BreakdownBar> bars;
    for (size_t i = 0; i < names.size(); ++i) bars.push_back({names[i], plans[i].breakdown});
    for (viz::BreakdownBar& b : viz::shared_arena_bars(*shared, ptrs)) bars.push_back(std::move(b));
    const std::string html = (fs::path(report_dir) / "shared_arena.html").string();
    auto page = viz::breakdown_file(bars, html);
    if (!page.is_ok()) return report(page.status());
    if (!write_file_atomically(html, *page).is_ok())
      return report_error(kExitBadModel, html + ": cannot write");
    if (!quiet) std::printf("wrote %s\n", html.c_str());
  }
  return kExitOk;
}

}  // namespace xopt::tool
