#include "tools/xopt/command.h"

#include <cstdio>

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

}  // namespace xopt::tool
