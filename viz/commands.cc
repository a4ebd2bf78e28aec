#include "viz/commands.h"

#include <filesystem>
#include <initializer_list>
#include <utility>

#include "ir/onnx_io.h"
#include "planner/shared_arena.h"
#include "viz/breakdown.h"
#include "viz/diff.h"
#include "viz/graph_drawing.h"
#include "viz/output.h"
#include "viz/precision_marks.h"
#include "viz/timeline.h"

namespace xopt::viz {
namespace {

void notify(const StepObserver& step, const std::string& what) {
  if (step) step(what);
}

Result<ir::Model> load(const std::string& path, const StepObserver& step) {
  notify(step, "reading " + path);
  return load_for_drawing(path);
}

bool has_extension(const std::string& path, std::initializer_list<const char*> extensions) {
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const char* e : extensions)
    if (ext == e) return true;
  return false;
}

// A shared-arena member by the name the group gave it, any other model by its file name.
Result<std::string> bar_label(const std::string& path, const ir::Model& m) {
  auto group = planner::read_shared_arena(m);
  if (!group.is_ok()) return group.status().with_context(path + ": ");
  if (*group && !(*group)->member.empty()) return (*group)->member;
  return std::filesystem::path(path).filename().string();
}

// One bar per model (a sweep: one per model and batch), and with several models and no sweep the
// shared-arena group's bars.
Result<std::vector<BreakdownBar>> bars_of(const std::vector<std::string>& models,
                                          const std::vector<int64_t>& batches,
                                          const StepObserver& step) {
  std::vector<BreakdownBar> bars;
  std::vector<ir::Model> loaded;
  loaded.reserve(models.size());
  for (const auto& path : models) {
    XOPT_ASSIGN_OR_RETURN(ir::Model read, load(path, step));
    loaded.push_back(std::move(read));
    const ir::Model& m = loaded.back();
    XOPT_ASSIGN_OR_RETURN(const std::string label, bar_label(path, m));
    if (!batches.empty()) {
      notify(step, "planning " + label + " at " + std::to_string(batches.size()) + " batches");
      XOPT_ASSIGN_OR_RETURN(std::vector<BreakdownBar> sweep, breakdown_sweep(m, label, batches));
      bars.insert(bars.end(), sweep.begin(), sweep.end());
      continue;
    }
    XOPT_ASSIGN_OR_RETURN(BreakdownBar bar, breakdown_bar(m, label));
    bars.push_back(std::move(bar));
  }
  if (batches.empty() && models.size() > 1) {  // a shared-arena group: separate vs shared
    std::vector<const ir::Model*> group;
    group.reserve(loaded.size());
    for (const ir::Model& m : loaded) group.push_back(&m);
    XOPT_ASSIGN_OR_RETURN(std::vector<BreakdownBar> shared, shared_arena_bars(group));
    bars.insert(bars.end(), shared.begin(), shared.end());
  }
  return bars;
}

}  // namespace

Status check_output_extension(const std::string& command, const std::string& out) {
  if (command == "graph") {
    if (!has_extension(out, {".svg", ".png", ".pdf", ".dot", ".gv"}))
      return invalid_argument(out + ": graph writes .svg, .png, .pdf or .dot");
  } else if (command == "diff") {
    if (!has_extension(out, {".svg", ".html", ".htm", ".png", ".pdf", ".dot"}))
      return invalid_argument(out + ": diff writes .svg, .html, .png, .pdf or .dot");
  } else if (!has_extension(out, {".svg", ".html", ".htm", ".png"})) {
    return invalid_argument(out + ": writes .svg, .png or .html");
  }
  return Status::ok();
}

Status write_graph_file(const std::string& model, const std::string& out, int collapse_depth,
                        bool show_weights, const StepObserver& step) {
  XOPT_ASSIGN_OR_RETURN(const Format format, format_from_path(out));
  XOPT_ASSIGN_OR_RETURN(ir::Model m, load(model, step));
  GraphOptions o;
  o.collapse_depth = collapse_depth;
  o.show_weights = show_weights;
  o.title = std::filesystem::path(model).filename().string();
  notify(step, "laying out and rendering " + std::to_string(m.graph->num_nodes()) + " nodes");
  XOPT_ASSIGN_OR_RETURN(auto drawing, draw_graph(*m.graph, format, o));
  return write_file(out, drawing.data);
}

Status write_timeline_file(const std::string& model, const std::string& out,
                           const std::vector<int64_t>& batches, const StepObserver& step) {
  XOPT_ASSIGN_OR_RETURN(ir::Model m, load(model, step));
  notify(step, batches.empty() ? std::string("drawing the plan") : "planning the batches");
  XOPT_ASSIGN_OR_RETURN(const std::string page, timeline_file(m, out, batches));
  return write_file(out, page);
}

Status write_diff_file(const std::string& a, const std::string& b, const std::string& out,
                       const StepObserver& step) {
  XOPT_ASSIGN_OR_RETURN(const ir::Model before, load(a, step));
  XOPT_ASSIGN_OR_RETURN(const ir::Model after, load(b, step));
  notify(step, "matching and drawing " + std::to_string(before.graph->num_nodes()) + " + " +
                   std::to_string(after.graph->num_nodes()) + " nodes");
  XOPT_ASSIGN_OR_RETURN(const std::string page, diff_file(before, after, out));
  return write_file(out, page);
}

Status write_breakdown_file(const std::vector<std::string>& models, const std::string& out,
                            const std::vector<int64_t>& batches, const StepObserver& step) {
  XOPT_ASSIGN_OR_RETURN(const std::vector<BreakdownBar> bars, bars_of(models, batches, step));
  XOPT_ASSIGN_OR_RETURN(const std::string page, breakdown_file(bars, out));
  return write_file(out, page);
}

}  // namespace xopt::viz
