// xviz: draws what xopt did and where the bytes go.
//   xviz graph MODEL -o out.svg|png|pdf|dot [--collapse-depth N] [--show-weights]
//   xviz timeline MODEL.opt.onnx -o t.svg|html
//   xviz diff A.onnx B.onnx -o diff.svg|html
//   xviz breakdown MODEL... -o b.svg
// The viz library does the work (viz/commands.h: read, draw, write) and returns errors; this file
// parses flags, prints and picks exit codes (0 ok, 1 usage, 2 bad model or unwritable file).
// Progress goes to stderr only when it is a terminal (-q: never). The Python package's xopt.viz
// calls the same library functions, so both write the same files.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/xviz/cli.h"
#include "viz/commands.h"

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

int finish(const Status& st, const std::string& out) {
  progress_done();
  if (!st.is_ok()) return fail(st);
  std::printf("wrote %s\n", out.c_str());
  return 0;
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
  const std::string command = graph->parsed()      ? "graph"
                              : diff->parsed()     ? "diff"
                              : timeline->parsed() ? "timeline"
                                                   : "breakdown";
  if (Status st = check_output_extension(command, out); !st.is_ok()) return usage(st.message());
  if (graph->parsed()) return finish(write_graph_file(model, out, depth, weights, progress), out);
  if (diff->parsed()) return finish(write_diff_file(model, other, out, progress), out);
  if (timeline->parsed()) return finish(write_timeline_file(model, out, batches, progress), out);
  for (int64_t b : breakdown_batches)
    if (b < 1) return usage("--batch: " + std::to_string(b) + " is not a batch size");
  return finish(write_breakdown_file(models, out, breakdown_batches, progress), out);
}

}  // namespace xopt::viz
