// `xopt --list-ops`: the ops the CPU reference executor has kernels for.
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "executor/cpu/kernel.h"
#include "executor/cpu/kernel_precision.h"
#include "tools/xopt/command.h"
#include "tools/xopt/validate.h"

namespace xopt::tool {

int list_ops(const DeviceFlags& device) {
  if (device.cuda()) return list_cuda_ops();
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
    // Element types and accumulator from the executor's table (executor/cpu/kernel_precision.h).
    const std::string precision = exec::describe(exec::kernel_precision(
        key.first == "ai.onnx" ? "" : key.first, key.second, merged.back().second));
    std::printf("%-*s  %-13s  opset %-8s  types %s\n", static_cast<int>(width), key.second.c_str(),
                key.first.c_str(), text.c_str(), precision.c_str());
  }
  // What the claims cover, on stderr so that stdout stays one op per line. The conformance runner
  // reports cases outside them as unsupported, with the reason.
  std::fputs(
      "claims cover tensors of float, double, float16, bfloat16, int8/16/32/64, uint8/16/32/64 "
      "and bool where the op's spec allows them (string for Equal and data movement); the "
      "narrow types float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), float8e8m0, float4e2m1, int4, "
      "uint4, int2 and uint2 only for Cast, CastLike, QuantizeLinear and DequantizeLinear, from "
      "the opsets that add them; sequences and optionals of tensors for the Sequence* and "
      "Optional* ops, SplitToSequence, ConcatFromSequence, SequenceMap, If, Loop and Identity; "
      "not claimed: float6 (e2m3, e3m2), maps and sequences of sequences, and Dropout in "
      "training mode with ratio > 0 (random mask)\n",
      stderr);
  // Standard ops with no kernel yet, by why they wait (issue 13).
  std::fputs(
      "waiting (no CPU kernel): training ops of ai.onnx.preview.training (Adagrad, Adam, "
      "Momentum, Gradient); string ops (StringConcat, StringNormalizer, StringSplit, "
      "RegexFullMatch); every ai.onnx.ml op\n"
      "random ops (Bernoulli, RandomNormal[Like], RandomUniform[Like], Multinomial) draw from "
      "their own generator, not numpy's: the same seed repeats a draw within xopt only\n",
      stderr);
  return kExitOk;
}

}  // namespace xopt::tool
