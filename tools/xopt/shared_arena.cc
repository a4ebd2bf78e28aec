#include "tools/xopt/shared_arena.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/atomic_file.h"
#include "onnx/onnx_pb.h"
#include "planner/annotate.h"
#include "planner/memory_breakdown.h"
#include "planner/offload.h"
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

// The memory plan stored in the model at `path`, and its breakdown (with its offload schedule).
struct FilePlan {
  planner::MemoryPlan plan;
  planner::MemoryBreakdown breakdown;
};
Result<FilePlan> read_file_plan(const std::string& path) {
  XOPT_ASSIGN_OR_RETURN(onnx::ModelProto m, read_proto(path));
  std::optional<planner::MemoryPlan> plan;
  std::optional<planner::OffloadPlan> offload;
  for (const auto& p : m.metadata_props()) {
    if (p.key() == planner::kPlanMetadataKey) {
      XOPT_ASSIGN_OR_RETURN(plan, planner::plan_from_json(p.value()));
    } else if (p.key() == planner::kOffloadMetadataKey) {
      XOPT_ASSIGN_OR_RETURN(offload, planner::offload_from_json(p.value()));
    }
  }
  if (!plan) return invalid_model(path + ": carries no memory plan");
  const planner::MemoryBreakdown b =
      planner::memory_breakdown(*plan, offload ? &*offload : nullptr);
  return FilePlan{std::move(*plan), b};
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
                        const std::vector<std::string>& names,
                        const std::vector<std::string>& outputs, const std::string& report_dir,
                        bool quiet) {
  std::vector<planner::MemoryPlan> plans;
  std::vector<planner::MemoryBreakdown> breakdowns;
  for (const std::string& out : outputs) {
    auto p = read_file_plan(out);
    if (!p.is_ok()) return report(p.status(), out);
    plans.push_back(std::move(p->plan));
    breakdowns.push_back(p->breakdown);
  }
  std::vector<const planner::MemoryPlan*> ptrs;
  ptrs.reserve(plans.size());
  for (const planner::MemoryPlan& p : plans) ptrs.push_back(&p);
  auto shared = planner::share_arena(names.empty() ? models : names, ptrs);
  if (!shared.is_ok()) return report(shared.status());
  for (const std::string& out : outputs) {
    Status st = set_file_metadata(out, planner::kSharedArenaMetadataKey,
                                  planner::shared_arena_to_json(*shared));
    if (!st.is_ok()) return report(st, out);
  }
  const planner::SharedArenaFigures f = planner::shared_arena_figures_of(*shared, breakdowns);
  std::fputs(planner::shared_arena_text(*shared, f).c_str(), stdout);
  if (!report_dir.empty()) {
    const std::string path = (fs::path(report_dir) / "shared_arena.json").string();
    const std::string json = planner::shared_arena_report_json(*shared, f, outputs);
    if (!write_file_atomically(path, json + "\n").is_ok())
      return report_error(kExitBadModel, path + ": cannot write");
    if (!quiet) std::printf("wrote %s\n", path.c_str());
    // The bars: each member alone, the members summed, the group.
    std::vector<viz::BreakdownBar> bars;
    for (size_t i = 0; i < shared->members.size(); ++i)
      bars.push_back({shared->members[i], f.members[i]});
    for (viz::BreakdownBar& b : viz::shared_arena_bars(f)) bars.push_back(std::move(b));
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
