// xopt-conformance [DIR...]: runs the ONNX backend test folders with the CPU reference executor and
// prints the per-op table and totals. Exit status: 0 when it ran (2 when a folder is missing),
// unless
// --require-pass is given, then 1 when any case failed or was unsupported.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <regex>

#include "executor/cpu/conformance.h"

namespace fs = std::filesystem;
using xopt::exec::conformance::CaseResult;
using xopt::exec::conformance::Outcome;

int main(int argc, char** argv) {
  CLI::App app{"Runs ONNX backend conformance tests with the xopt CPU reference executor"};
  std::vector<std::string> dirs;
  std::string filter;
  bool require_pass = false, details = false, arena = false, verbose = false;
  double rtol = 1e-3, atol = 1e-7;
  app.add_option("dirs", dirs,
                 "Test folders (default: ../shared/onnx-conformance/{node,simple,pytorch-converted,"
                 "pytorch-operator,light})");
  app.add_option("--filter", filter, "Only cases whose name matches this regular expression");
  app.add_flag("--require-pass", require_pass, "Exit 1 unless every case passed");
  app.add_flag("--details", details, "List every failed or unsupported case with the reason");
  app.add_flag("--arena", arena,
               "Also run each case in a sequential arena plan and require identical outputs");
  app.add_flag("-v,--verbose", verbose, "Print each case as it runs");
  app.add_option("--rtol", rtol, "Relative tolerance (default 1e-3)");
  app.add_option("--atol", atol, "Absolute tolerance (default 1e-7)");
  CLI11_PARSE(app, argc, argv);

  if (dirs.empty())
    for (const char* s : {"node", "simple", "pytorch-converted", "pytorch-operator", "light"})
      dirs.push_back(std::string("../shared/onnx-conformance/") + s);
  std::regex re;
  try {
    if (!filter.empty()) re = std::regex(filter);
  } catch (const std::regex_error& e) {
    std::cerr << "xopt-conformance: --filter: " << e.what() << "\n";
    return 1;
  }
  xopt::exec::conformance::Options opts;
  opts.rtol = rtol;
  opts.atol = atol;
  opts.also_arena = arena;
  std::vector<CaseResult> results;
  for (const std::string& d : dirs) {
    if (!fs::exists(d)) {
      std::cerr << "xopt-conformance: " << d << ": no such folder\n";
      return 2;
    }
    for (const std::string& c : xopt::exec::conformance::list_cases(d)) {
      if (!filter.empty() && !std::regex_search(fs::path(c).filename().string(), re)) continue;
      results.push_back(xopt::exec::conformance::run_case(c, opts));
      const CaseResult& r = results.back();
      if (verbose)
        std::cout << xopt::exec::conformance::outcome_name(r.outcome) << "  " << r.suite << "/"
                  << r.name << (r.detail.empty() ? "" : "  " + r.detail) << std::endl;
    }
  }
  std::cout << xopt::exec::conformance::format_report(results, details);
  if (require_pass) {
    auto t = xopt::exec::conformance::totals(results);
    return t.passed == t.total() ? 0 : 1;
  }
  return 0;
}
