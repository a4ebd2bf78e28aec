// The xopt command line as a function (command.h): the executable's main and the Python package's
// `python -m xopt` / `xopt.optimize` both call it. Without a subcommand it runs a pass pipeline
// over one model:
//   xopt --passes=cleanup model.onnx -o model.opt.onnx
// Subcommands register themselves (command.h), so this only parses and dispatches.
#include <CLI/CLI.hpp>
#include <utility>
#include <vector>

#include "tools/xopt/command.h"

namespace xopt::tool {

int run_cli(int argc, char** argv) {
  CLI::App app{"xopt: optimizes ONNX models (cleanup, constant folding, fusion, memory planning)",
               "xopt"};
  app.set_help_all_flag("--help-all", "Print help for every subcommand");
  std::function<int()> optimize = setup_optimize(app);
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
  for (const Subcommand& c : subcommands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    commands.emplace_back(sub, c.setup(*sub));
  }
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help and friends
    return report_error(kExitUsage, std::string(e.what()) + " (see xopt --help)");
  }
  for (auto& [sub, run] : commands)
    if (sub->parsed()) return run();
  return optimize();
}

}  // namespace xopt::tool
