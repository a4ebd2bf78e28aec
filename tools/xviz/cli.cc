// xviz: draws what xopt did and where the bytes go.
//   xviz graph MODEL -o out.svg|png|pdf|dot [--collapse-depth N] [--show-weights]
//   xviz timeline MODEL.opt.onnx -o t.svg|html
//   xviz diff A.onnx B.onnx -o diff.svg|html
//   xviz breakdown MODEL... -o b.svg
// The viz library does the work and returns errors; this file parses flags, writes files and picks
// exit codes (0 ok, 1 usage, 2 bad model or unwritable file). Progress goes to stderr only when
// it is a terminal (-q: never).
// The command line is a function (cli.h) that the executable's main and the Python package's
// xopt.viz both call, so both write the same files and print the same errors.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "tools/xviz/cli.h"
#include "viz/breakdown.h"
#include "viz/diff.h"
#include "viz/graph_drawing.h"
#include "viz/output.h"
#include "viz/precision_marks.h"
#include "viz/timeline.h"

namespace {

using namespace xopt;

// Progress on stderr while a step runs, only when stderr is a terminal (and not -q): one line,
// rewritten in place and erased when the command ends.
bool g_progress = false;

void progress(const std::string& what) {
  if (g_progress) std::fprintf(stderr, "\r\033[Kxviz: %s ...", what.c_str());
}

void progress_done() {
  if (g_progress) std::fputs("\r\033[K", stderr);
}

Result<ir::Model> load(const std::string& path) {
  progress("reading " + path);
  return viz::load_for_drawing(path);
}

// Flags were checked before anything was read: what fails later is the model or the file (2).
int fail(const Status& st) {
  progress_done();
  std::fprintf(stderr, "xviz: error: %s\n", st.message().c_str());
  return 2;
}

int usage(const std::string& message) {
  std::fprintf(stderr, "xviz: error: %s (see xviz --help)\n", message.c_str());
  return 1;
}

// The output's extension is one the subcommand writes.
bool has_extension(const std::string& path, std::initializer_list<const char*> extensions) {
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const char* e : extensions)
    if (ext == e) return true;
  return false;
}

int finish(const Status& st, const std::string& out) {
  progress_done();
  if (!st.is_ok()) return fail(st);
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

int run_graph(const std::string& model, const std::string& out, int depth, bool weights) {
  auto format = viz::format_from_path(out);
  if (!format.is_ok()) return fail(format.status());
  auto m = load(model);
  if (!m.is_ok()) return fail(m.status());
  viz::GraphOptions o;
  o.collapse_depth = depth;
  o.show_weights = weights;
  o.title = std::filesystem::path(model).filename().string();
  o.marks = viz::precision_marks(*m);  // float16 / bfloat16 nodes of a converted model
  progress("laying out and rendering " + std::to_string(m->graph->num_nodes()) + " nodes");
  auto d = viz::draw_graph(*m->graph, *format, o);
  if (!d.is_ok()) return fail(d.status());
  return finish(viz::write_file(out, d->data), out);
}

int run_timeline(const std::string& model, const std::string& out,
                 const std::vector<int64_t>& batches) {
  auto m = load(model);
  if (!m.is_ok()) return fail(m.status());
  progress(batches.empty() ? std::string("drawing the plan") : "planning the batches");
  auto page = viz::timeline_file(*m, out, batches);
  if (!page.is_ok()) return fail(page.status());
  return finish(viz::write_file(out, *page), out);
}

int run_diff(const std::string& a, const std::string& b, const std::string& out) {
  auto before = load(a);
  if (!before.is_ok()) return fail(before.status());
  auto after = load(b);
  if (!after.is_ok()) return fail(after.status());
  progress("matching and drawing " + std::to_string(before->graph->num_nodes()) + " + " +
           std::to_string(after->graph->num_nodes()) + " nodes");
  auto page = viz::diff_file(*before, *after, out);
  if (!page.is_ok()) return fail(page.status());
  return finish(viz::write_file(out, *page), out);
}

int run_breakdown(const std::vector<std::string>& models, const std::string& out,
                  const std::vector<int64_t>& batches) {
  std::vector<viz::BreakdownBar> bars;
  std::vector<ir::Model> loaded;
  loaded.reserve(models.size());
  for (const auto& path : models) {
    auto read = load(path);
    if (!read.is_ok()) return fail(read.status());
    loaded.push_back(std::move(read).value());
    const ir::Model& m = loaded.back();
    const std::string label = std::filesystem::path(path).filename().string();
    if (!batches.empty()) {
      progress("planning " + label + " at " + std::to_string(batches.size()) + " batches");
      auto sweep = viz::breakdown_sweep(m, label, batches);
      if (!sweep.is_ok()) return fail(sweep.status());
      bars.insert(bars.end(), sweep->begin(), sweep->end());
      continue;
    }
    auto bar = viz::breakdown_bar(m, label);
    if (!bar.is_ok()) return fail(bar.status());
    bars.push_back(*bar);
  }
  if (batches.empty() && models.size() > 1) {  // a shared-arena group: separate vs shared
    std::vector<const ir::Model*> group;
    group.reserve(loaded.size());
    for (const ir::Model& m : loaded) group.push_back(&m);
    auto shared = viz::shared_arena_bars(group);
    if (!shared.is_ok()) return fail(shared.status());
    bars.insert(bars.end(), shared->begin(), shared->end());
  }
  auto page = viz::breakdown_file(bars, out);
  if (!page.is_ok()) return fail(page.status());
  return finish(viz::write_file(out, *page), out);
}

}  // namespace

namespace xopt::viz {

int run_cli(int argc, char** argv) {
  CLI::App app{"xviz: draws ONNX graphs, graph diffs, memory timelines and breakdowns", "xviz"};
  app.require_subcommand(1, 1);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "No progress on stderr (shown only when it is a terminal)");

  std::string model, out, other;
  int depth = -1;
  bool weights = false;
  std::vector<std::string> models;

  CLI::App* graph = app.add_subcommand("graph", "Draw a model's graph (.svg, .png, .pdf or .dot)");
  graph->add_option("model", model, "Model (.onnx)")->required();
  graph->add_option("-o,--output", out, "Output file: .svg, .png, .pdf or .dot")->required();
  graph->add_option("--collapse-depth", depth,
                    "Draw each name-scope cluster deeper than N as one box with its op counts");
  graph->add_flag("--show-weights", weights, "Draw initializers as nodes of their own");

  CLI::App* timeline =
      app.add_subcommand("timeline", "Draw the memory plan stored in a model (.svg or .html)");
  timeline->add_option("model", model, "Model carrying xopt.memory_plan")->required();
  timeline->add_option("-o,--output", out, "Output file: .svg, .png or .html")->required();
  std::vector<int64_t> batches;
  timeline->add_option("--batch", batches, "A sweep: plan again at each batch, e.g. 1,8,32")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);

  CLI::App* diff = app.add_subcommand("diff", "What changed from A to B (.svg or .html)");
  diff->add_option("a", model, "Model before")->required();
  diff->add_option("b", other, "Model after")->required();
  diff->add_option("-o,--output", out, "Output file: .svg or .html (also .png, .pdf, .dot)")
      ->required();

  CLI::App* breakdown =
      app.add_subcommand("breakdown", "Memory breakdown of planned models as stacked bars (.svg)");
  breakdown->add_option("models", models, "Models carrying xopt.memory_plan")->required();
  breakdown->add_option("-o,--output", out, "Output file: .svg, .png or .html")->required();
  std::vector<int64_t> breakdown_batches;
  breakdown
      ->add_option("--batch", breakdown_batches,
                   "A sweep: one bar per model and batch, planned again at each, e.g. 1,8,32")
      ->delimiter(',');

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "xviz: error: %s (see xviz --help)\n", e.what());
    return 1;
  }
  g_progress = !quiet && isatty(STDERR_FILENO);
  if (graph->parsed()) {
    if (!has_extension(out, {".svg", ".png", ".pdf", ".dot", ".gv"}))
      return usage(out + ": graph writes .svg, .png, .pdf or .dot");
    return run_graph(model, out, depth, weights);
  }
  if (diff->parsed()) {
    if (!has_extension(out, {".svg", ".html", ".htm", ".png", ".pdf", ".dot"}))
      return usage(out + ": diff writes .svg, .html, .png, .pdf or .dot");
    return run_diff(model, other, out);
  }
  if (!has_extension(out, {".svg", ".html", ".htm", ".png"}))
    return usage(out + ": writes .svg, .png or .html");
  if (timeline->parsed()) return run_timeline(model, out, batches);
  for (int64_t b : breakdown_batches)
    if (b < 1) return usage("--batch: " + std::to_string(b) + " is not a batch size");
  return run_breakdown(models, out, breakdown_batches);
}

}  // namespace xopt::viz
