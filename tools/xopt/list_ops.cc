// `xopt --list-ops`: the ops the CPU reference executor has kernels for.
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "executor/cpu/kernel.h"
#include "tools/xopt/command.h"
#include "tools/xopt/validate.h"

namespace xopt::tool {

int list_ops() {
  // (domain, op) -> opset ranges, adjacent or overlapping registrations merged.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<int, int>>> ops;
  for (const exec::KernelDef& k : exec::KernelRegistry::global().all())
    ops[{k.domain.empty() ? "ai.onnx" : k.domain, k.op_type}].emplace_back(k.since_version,
                                                                           k.until_version);
  size_t width = 0;
  for (const auto& [key, ranges] : ops) width = std::max(width, key.second.size());
  for (auto& [key, ranges] : ops) {
    std::sort(ranges.begin(), ranges.end());
    std::vector<std::pair<int, int>> merged;
    for (const auto& r : ranges) {
      if (!merged.empty() && r.first <= merged.back().second + 1)
        merged.back().second = std::max(merged.back().second, r.second);
      else
        merged.push_back(r);
    }
    std::string text;
    for (const auto& [lo, hi] : merged)
      text += (text.empty() ? "" : ", ") + std::to_string(lo) + "-" + std::to_string(hi);
    std::printf("%-*s  %-13s  opset %s\n", static_cast<int>(width), key.second.c_str(),
                key.first.c_str(), text.c_str());
  }
  return kExitOk;
}

}  // namespace xopt::tool
