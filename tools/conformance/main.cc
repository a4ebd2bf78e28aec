// xopt-conformance [DIR...]: runs the ONNX backend test folders with the CPU reference executor and
// prints the per-op table and totals (the same library calls as `xopt conformance`). Exit status: 0
// when it ran (2 when a folder is missing), unless --require-pass is given, then 1 when any case
// failed or was unsupported.
#include <CLI/CLI.hpp>
#include <iostream>

#include "executor/cpu/conformance_suite.h"

namespace conf = xopt::exec::conformance;

int main(int argc, char** argv) {
  CLI::App app{"Runs ONNX backend conformance tests with the xopt CPU reference executor"};
  std::vector<std::string> dirs;
  bool require_pass = false, details = false, verbose = false;
  conf::SuiteOptions opts;
  app.add_option("dirs", dirs,
                 "Test folders (default: ../shared/onnx-conformance/{node,simple,pytorch-converted,"
                 "pytorch-operator,light})");
  app.add_option("--filter", opts.filter, "Only cases whose name matches this regular expression");
  app.add_flag("--require-pass", require_pass, "Exit 1 unless every case passed");
  app.add_flag("--details", details, "List every failed or unsupported case with the reason");
  app.add_flag("--arena", opts.run.also_arena,
               "Also run each case in a sequential arena plan and require identical outputs");
  app.add_flag("-v,--verbose", verbose, "Print each case as it runs");
  app.add_option("--rtol", opts.run.rtol, "Relative tolerance (default 1e-3)");
  app.add_option("--atol", opts.run.atol, "Absolute tolerance (default 1e-7)");
  CLI11_PARSE(app, argc, argv);

  if (dirs.empty()) dirs = conf::default_suite_dirs("../shared");
  if (verbose)
    opts.on_case = [](const conf::CaseResult& r) {
      std::cout << conf::outcome_name(r.outcome) << "  " << r.suite << "/" << r.name
                << (r.detail.empty() ? "" : "  " + r.detail) << std::endl;
    };
  auto results = conf::run_suites(dirs, opts);
  if (!results.is_ok()) {
    std::cerr << "xopt-conformance: " << results.status().message() << "\n";
    return results.status().code() == xopt::ErrorCode::kIo ? 2 : 1;
  }
  std::cout << conf::format_report(*results, details);
  if (require_pass) {
    auto t = conf::totals(*results);
    return t.passed == t.total() ? 0 : 1;
  }
  return 0;
}
