#include "pipeline/shared_arena.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "onnx/onnx_pb.h"
#include "pipeline/files.h"
#include "pipeline/parse.h"
#include "planner/annotate.h"
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

// The plans of the outputs and the members' names.
Status read_members(const std::vector<std::string>& models, const std::vector<std::string>& outputs,
                    SharedArenaOutcome& g) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto p = read_file_plan(outputs[i]);
    if (!p.is_ok()) return in_file(p.status(), outputs[i]);
    g.plans.push_back(std::move(p).value());
    std::string name = fs::path(models[i]).stem().string();
    for (const std::string& n : g.names)
      if (n == name) name = models[i];  // two files of the same name: the paths tell them apart
    g.names.push_back(name);
  }
  g.outputs = outputs;
  return Status::ok();
}

std::string report_document(const SharedArenaOutcome& g) {
  const planner::SharedArenaFigures& f = g.figures;
  nlohmann::json j;
  j["format"] = "xopt.shared_arena_report";
  j["version"] = 1;
  j["group"] = nlohmann::json::parse(planner::shared_arena_to_json(g.shared));
  for (size_t i = 0; i < g.names.size(); ++i) {
    const planner::MemoryPlan& p = g.plans[i];
    j["members"].push_back({{"name", g.names[i]},
                            {"output", g.outputs[i]},
                            {"parameters", p.breakdown.parameters},
                            {"arena", p.arena_bytes},
                            {"workspace", p.workspace_bytes},
                            {"context", p.breakdown.cuda_context},
                            {"context_estimated", p.breakdown.cuda_context_estimated},
                            {"total_alone", f.member_totals[i]}});
  }
  j["shared_total"] = f.shared_total;
  j["separate_total"] = f.separate_total;
  j["parameters"] = f.parameters;
  j["context"] = f.context;
  return j.dump(2);
}

// DIR/shared_arena.json and the bars: each member alone, the members summed, the group.
Status write_report(const std::string& report_dir,
                    const std::vector<const planner::MemoryPlan*>& ptrs, SharedArenaOutcome& g) {
  const std::string path = (fs::path(report_dir) / "shared_arena.json").string();
  if (!write_file_atomically(path, g.report_json + "\n").is_ok())
    return io_error(path + ": cannot write");
  g.written.push_back(path);
  std::vector<viz::BreakdownBar> bars;
  for (size_t i = 0; i < g.names.size(); ++i) bars.push_back({g.names[i], g.plans[i].breakdown});
  for (viz::BreakdownBar& b : viz::shared_arena_bars(g.shared, ptrs)) bars.push_back(std::move(b));
  const std::string html = (fs::path(report_dir) / "shared_arena.html").string();
  XOPT_ASSIGN_OR_RETURN(const std::string page, viz::breakdown_file(bars, html));
  if (!write_file_atomically(html, page).is_ok()) return io_error(html + ": cannot write");
  g.written.push_back(html);
  return Status::ok();
}

}  // namespace

Result<std::vector<std::string>> shared_arena_outputs(const Request& each,
                                                      const std::vector<std::string>& models) {
  if (models.size() < 2) return invalid_argument("--shared-arena needs at least two models");
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
                                             const std::vector<std::string>& outputs,
                                             const std::string& report_dir) {
  SharedArenaOutcome g;
  XOPT_RETURN_IF_ERROR(read_members(models, outputs, g));
  std::vector<const planner::MemoryPlan*> ptrs;
  ptrs.reserve(g.plans.size());
  for (const planner::MemoryPlan& p : g.plans) ptrs.push_back(&p);
  XOPT_ASSIGN_OR_RETURN(g.shared, planner::share_arena(g.names, ptrs));
  for (const std::string& out : outputs)
    XOPT_RETURN_IF_ERROR(in_file(set_file_metadata(out, planner::kSharedArenaMetadataKey,
                                                   planner::shared_arena_to_json(g.shared)),
                                 out));
  g.figures = planner::shared_arena_figures(g.shared, ptrs);
  g.report_json = report_document(g);
  if (!report_dir.empty()) {
    XOPT_RETURN_IF_ERROR(create_folder(report_dir));
    XOPT_RETURN_IF_ERROR(write_report(report_dir, ptrs, g));
  }
  return g;
}

}  // namespace xopt::pipeline
