#include "passes/precision/convert_tensor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <limits>

namespace xopt::passes {

namespace {
float largest(ir::DType type) {
  if (type == ir::DType::kFloat16) return 65504.0f;
  if (type == ir::DType::kBFloat16) return ir::bfloat16_to_float(0x7F7F);
  return std::numeric_limits<float>::max();
}
}  // namespace

float safe_lowest(ir::DType type) {
  return -largest(type) / 2;
}

ir::Tensor convert_float_tensor(const ir::Tensor& src, ir::DType type, const ConvertRules& rules,
                                ConvertCounts* counts) {
  const float* in = src.data<float>();
  const int64_t n = src.numel();
  const float hi = largest(type), lo_mask = safe_lowest(type);
  ir::Tensor out(type, src.dims());
  int64_t clamped = 0, masked = 0;
  auto adjust = [&](float v) {
    if (rules.mask && v <= lo_mask) {
      ++masked;
      return lo_mask;
    }
    if (rules.clamp && std::isfinite(v) && std::fabs(v) > hi) {
      ++clamped;
      return std::copysign(hi, v);
    }
    return v;
  };
  if (type == ir::DType::kFloat16) {
    auto* o = out.mutable_data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = ir::float_to_half(adjust(in[i]));
  } else if (type == ir::DType::kBFloat16) {
    auto* o = out.mutable_data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = ir::float_to_bfloat16(adjust(in[i]));
  } else {
    auto* o = out.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = adjust(in[i]);
  }
  if (counts != nullptr) {
    counts->clamped += clamped;
    counts->mask_values += masked;
  }
  return out;
}

void release_mapped_pages(const ir::Tensor& t) {
  if (!t.is_mapped() || t.nbytes() == 0) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(t.raw_data());
  const uintptr_t end = begin + t.nbytes();
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  // The mapping is private and read-only: dropping its pages loses nothing (they are the file's).
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace xopt::passes
