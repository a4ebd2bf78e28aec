#include "executor/cpu/conformance_suite.h"

#include <filesystem>
#include <regex>

namespace xopt::exec::conformance {

namespace fs = std::filesystem;

std::vector<std::string> default_suite_dirs(const std::string& shared_dir) {
  std::vector<std::string> out;
  for (const char* s : {"node", "simple", "pytorch-converted", "pytorch-operator", "light"})
    out.push_back((fs::path(shared_dir) / "onnx-conformance" / s).string());
  return out;
}

Result<std::vector<CaseResult>> run_suites(const std::vector<std::string>& dirs,
                                           const SuiteOptions& options) {
  std::regex re;
  try {
    if (!options.filter.empty()) re = std::regex(options.filter);
  } catch (const std::regex_error& e) {
    return invalid_argument("filter '" + options.filter + "': " + e.what());
  }
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (!fs::exists(d, ec)) return io_error(d + ": no such folder");
  }
  std::vector<CaseResult> results;
  for (const std::string& d : dirs) {
    for (const std::string& c : list_cases(d)) {
      const fs::path p(c);
      const std::string name = fs::is_regular_file(p) ? p.stem().string() : p.filename().string();
      if (!options.filter.empty() && !std::regex_search(name, re)) continue;
      results.push_back(run_case(c, options.run));
      if (options.on_case) options.on_case(results.back());
    }
  }
  return results;
}

}  // namespace xopt::exec::conformance
