#include "pipeline/parse.h"

#include <cmath>
#include <cstdlib>

namespace xopt::pipeline {

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

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    size_t pos = 0;
    while (pos <= item.size()) {
      size_t comma = item.find(',', pos);
      if (comma == std::string::npos) comma = item.size();
      if (comma > pos) out.push_back(item.substr(pos, comma - pos));
      pos = comma + 1;
    }
  }
  return out;
}

}  // namespace xopt::pipeline
