#include "pipeline/shared_arena.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/atomic_file.h"
#include "onnx/onnx_pb.h"
#include "pipeline/files.h"
#include "pipeline/parse.h"
#include "planner/annotate.h"
#include "planner/offload.h"
#include "viz/breakdown.h"

namespace xopt::pipeline {
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

// The plans and breakdowns of the outputs, and the members' names.
Status read_members(const std::vector<std::string>& models, const std::vector<std::string>& names,
                    const std::vector<std::string>& outputs, SharedArenaOutcome& g) {
  for (const std::string& out : outputs) {
    auto p = read_file_plan(out);
    if (!p.is_ok()) return in_file(p.status(), out);
    g.plans.push_back(std::move(p->plan));
    g.breakdowns.push_back(p->breakdown);
  }
  g.names = names.empty() ? models : names;
  g.outputs = outputs;
  return Status::ok();
}

// DIR/shared_arena.json and the bars: each member alone, the members summed, the group.
Status write_report(const std::string& report_dir, SharedArenaOutcome& g) {
  const std::string path = (fs::path(report_dir) / "shared_arena.json").string();
  if (!write_file_atomically(path, g.report_json + "\n").is_ok())
    return io_error(path + ": cannot write");
  g.written.push_back(path);
  std::vector<viz::BreakdownBar> bars;
  for (size_t i = 0; i < g.shared.members.size(); ++i)
    bars.push_back({g.shared.members[i], g.figures.members[i]});
  for (viz::BreakdownBar& b : viz::shared_arena_bars(g.figures)) bars.push_back(std::move(b));
  const std::string html = (fs::path(report_dir) / "shared_arena.html").string();
  XOPT_ASSIGN_OR_RETURN(const std::string page, viz::breakdown_file(bars, html));
  if (!write_file_atomically(html, page).is_ok()) return io_error(html + ": cannot write");
  g.written.push_back(html);
  return Status::ok();
}

}  // namespace

Result<std::vector<std::string>> shared_arena_outputs(const Request& each,
                                                      const std::vector<std::string>& models,
                                                      const std::vector<std::string>& names) {
  if (models.size() < 2) return invalid_argument("--shared-arena needs at least two models");
  if (!names.empty() && names.size() != models.size())
    return invalid_argument("--name: " + std::to_string(names.size()) + " names for " +
                            std::to_string(models.size()) +
                            " models (give one per model, in order, or none)");
  if (!each.output.empty())
    return invalid_argument(
        "-o/--output names one output; with --shared-arena each model's output goes beside it "
        "(<stem>.opt.onnx)");
  if (!each.max_batch.empty())
    return invalid_argument("--max-batch and --shared-arena exclude each other");
  bool plans = false;
  for (const std::string& p : split_list({each.passes}))
    plans = plans || p == "plan" || p == "plan-memory";
  if (!plans) return invalid_argument("--shared-arena needs the plan group in --passes");
  std::vector<std::string> outputs;
  for (const std::string& m : models) {
    for (const std::string& out : outputs)
      if (same_file(out, default_output(m)))
        return invalid_argument(m + ": its output " + out + " is another model's");
    outputs.push_back(default_output(m));
  }
  return outputs;
}

Result<SharedArenaOutcome> share_arena_files(const std::vector<std::string>& models,
                                             const std::vector<std::string>& names,
                                             const std::vector<std::string>& outputs,
                                             const std::string& report_dir) {
  SharedArenaOutcome g;
  XOPT_RETURN_IF_ERROR(read_members(models, names, outputs, g));
  std::vector<const planner::MemoryPlan*> ptrs;
  ptrs.reserve(g.plans.size());
  for (const planner::MemoryPlan& p : g.plans) ptrs.push_back(&p);
  XOPT_ASSIGN_OR_RETURN(g.shared, planner::share_arena(g.names, ptrs));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string record =
        planner::shared_arena_to_json(planner::shared_arena_member(g.shared, i));
    XOPT_RETURN_IF_ERROR(in_file(
        set_file_metadata(outputs[i], planner::kSharedArenaMetadataKey, record), outputs[i]));
  }
  g.figures = planner::shared_arena_figures_of(g.shared, g.breakdowns);
  g.text = planner::shared_arena_text(g.shared, g.figures);
  g.report_json = planner::shared_arena_report_json(g.shared, g.figures, g.outputs);
  if (!report_dir.empty()) {
    XOPT_RETURN_IF_ERROR(create_folder(report_dir));
    XOPT_RETURN_IF_ERROR(write_report(report_dir, g));
  }
  return g;
}

}  // namespace xopt::pipeline
