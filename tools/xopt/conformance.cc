// `xopt conformance [DIR...]`: the ONNX backend conformance folders run on the CPU executor, the
// per-op table of passed / failed / unsupported cases and the totals (the library's format_report,
// as xopt-conformance prints it).
#include <cstdio>
#include <memory>

#include "executor/cpu/conformance_suite.h"
#include "tools/xopt/command.h"
#include "tools/xopt/device.h"

namespace xopt::tool {
namespace {

namespace conf = exec::conformance;

struct ConformanceCommand {
  std::vector<std::string> dirs;
  conf::SuiteOptions suite;
  bool require_pass = false;
  bool details = false;
  bool verbose = false;
  DeviceFlags device;
};

int run_conformance(ConformanceCommand& c) {
  if (Status st = check_device_flags(c.device); !st.is_ok()) return report(st);
  if (c.device.cuda()) c.suite.run.runner = cuda_conformance_runner(c.device);
  if (c.dirs.empty()) c.dirs = conf::default_suite_dirs("../shared");
  if (c.verbose)
    c.suite.on_case = [](const conf::CaseResult& r) {
      std::printf("%s  %s/%s%s\n", conf::outcome_name(r.outcome), r.suite.c_str(), r.name.c_str(),
                  r.detail.empty() ? "" : ("  " + r.detail).c_str());
      std::fflush(stdout);
    };
  auto results = conf::run_suites(c.dirs, c.suite);
  if (!results.is_ok()) return report(results.status());
  std::fputs(conf::format_report(*results, c.details).c_str(), stdout);
  const conf::Tally t = conf::totals(*results);
  if (c.require_pass && t.passed != t.total()) {
    std::fflush(stdout);
    return report_error(kExitUsage, "--require-pass: " + std::to_string(t.failed) + " failed, " +
                                        std::to_string(t.unsupported) + " unsupported");
  }
  return kExitOk;
}

std::function<int()> setup_conformance(CLI::App& sub) {
  auto c = std::make_shared<ConformanceCommand>();
  sub.add_option("dirs", c->dirs,
                 "Test folders or light_*.onnx files (default: ../shared/onnx-conformance/{node,"
                 "simple,pytorch-converted,pytorch-operator,light})");
  sub.add_option("--filter", c->suite.filter, "Only cases whose name matches this regex");
  sub.add_flag("--details", c->details, "List every failed or unsupported case with the reason");
  sub.add_flag("--arena", c->suite.run.also_arena,
               "Also run each case in a sequential arena plan and require identical outputs");
  sub.add_flag("--require-pass", c->require_pass, "Exit 1 unless every case passed");
  sub.add_flag("-v,--verbose", c->verbose, "Print each case as it runs");
  sub.add_option("--rtol", c->suite.run.rtol, "Relative tolerance (default 1e-3, ONNX's)");
  sub.add_option("--atol", c->suite.run.atol, "Absolute tolerance (default 1e-7, ONNX's)");
  add_device_flags(sub, c->device);
  return [c] { return run_conformance(*c); };
}

}  // namespace

XOPT_SUBCOMMAND("conformance",
                "Run ONNX backend test folders on the CPU executor (or the GPU: --device cuda); "
                "per-op passed / failed / unsupported and totals",
                setup_conformance);

}  // namespace xopt::tool
