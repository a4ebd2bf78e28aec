#include "tools/xopt/command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace xopt::tool {

std::vector<Subcommand>& subcommands() {
  static std::vector<Subcommand> list;
  return list;
}

std::string error_line(const std::string& message, const std::string& file) {
  std::string text = message;
  if (!file.empty() && text.rfind(file, 0) != 0) text = file + ": " + text;
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r') continue;
    if (c == '\n') {
      if (i + 1 < text.size()) line += "; ";
      continue;
    }
    line += c;
  }
  return line;
}

int report_error(int code, const std::string& message, const std::string& file) {
  std::fprintf(stderr, "xopt: error: %s\n", error_line(message, file).c_str());
  return code;
}

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kMismatch:
      return kExitUsage;
    case ErrorCode::kPassFailed:
    case ErrorCode::kInternal:
      return kExitPassFailed;
    default:
      return kExitBadModel;
  }
}

int report(const Status& status, const std::string& file) {
  return report_error(exit_code_for(status), status.message(), file);
}

Result<size_t> parse_size(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v < 0 || !std::isfinite(v))
    return invalid_argument("bad size '" + text + "' (expected e.g. 1024, 64KiB, 1MiB)");
  std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB" || unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "MiB" || unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "KB" || unit == "kB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else
    return invalid_argument("bad size unit in '" + text + "' (use B, KiB, MiB, GiB, KB, MB, GB)");
  return static_cast<size_t>(std::llround(v * scale));
}

}  // namespace xopt::tool
