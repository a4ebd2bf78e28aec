#include "viz/visuals.h"

#include <filesystem>

#include "viz/graph_drawing.h"
#include "viz/output.h"
#include "viz/report.h"

namespace xopt::viz {
namespace {

namespace fs = std::filesystem;

Status write_graph(const ir::Graph& g, const std::string& dir, const std::string& stem) {
  GraphOptions o;
  o.title = stem;
  for (Format f : {Format::kDot, Format::kSvg}) {
    XOPT_ASSIGN_OR_RETURN(GraphDrawing d, draw_graph(g, f, o));
    XOPT_RETURN_IF_ERROR(
        write_file((fs::path(dir) / (stem + "." + format_name(f))).string(), d.data));
  }
  return Status::ok();
}

}  // namespace

Status write_visuals(const VisualsRequest& r) {
  if (!r.optimized) return invalid_argument("write_visuals: no optimized model");
  XOPT_ASSIGN_OR_RETURN(ir::Model original, load_for_drawing(r.original_path, r.bindings));
  if (!r.dot_dir.empty()) {
    std::error_code ec;
    fs::create_directories(r.dot_dir, ec);
    if (ec) return io_error(r.dot_dir + ": cannot create: " + ec.message());
    XOPT_RETURN_IF_ERROR(write_graph(*original.graph, r.dot_dir, "before"));
    XOPT_RETURN_IF_ERROR(write_graph(*r.optimized->graph, r.dot_dir, "after"));
  }
  if (!r.report_dir.empty()) {
    ReportInputs in;
    // "resnet18/model.onnx": the folder often names the model better than the file.
    const fs::path p(r.original_path);
    in.title = p.parent_path().filename().empty()
                   ? p.filename().string()
                   : (p.parent_path().filename() / p.filename()).string();
    in.before = original.graph.get();
    in.after = r.optimized->graph.get();
    in.plan = r.plan;
    in.model = r.optimized;
    in.stats_json = r.stats_json;
    XOPT_ASSIGN_OR_RETURN(std::string html, report_html(in));
    XOPT_RETURN_IF_ERROR(write_file((fs::path(r.report_dir) / "report.html").string(), html));
  }
  return Status::ok();
}

}  // namespace xopt::viz
