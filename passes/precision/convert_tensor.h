// Converting fp32 constants to fp16 / bf16 for convert-precision: range clamping, mask values
// moved to the target's safe lowest, and the source pages of a memory-mapped external tensor
// handed back to the kernel once converted, so a model larger than memory converts in about half
// its weights' size.
#pragma once

#include <cstdint>

#include "ir/dtype.h"
#include "ir/tensor.h"

namespace xopt::passes {

struct ConvertRules {
  // Finite values beyond the target's largest become the largest, with their sign (else they
  // round to infinity, as the naive converter does).
  bool clamp = true;
  // Values at or below the target's safe lowest (-inf included) become it: a mask constant.
  bool mask = false;
};

struct ConvertCounts {
  int64_t clamped = 0;      // finite values clamped to the target's range
  int64_t mask_values = 0;  // values moved to the safe lowest
};

// Half the target's lowest finite value: a masked score (score + lowest) stays finite even with
// a score of the same magnitude added, so a fully masked row still gives a finite softmax.
float safe_lowest(ir::DType type);

// `src` (fp32) as a new owned tensor of `type` (kFloat16, kBFloat16, or kFloat to only apply the
// mask rule), rounding to nearest even.
ir::Tensor convert_float_tensor(const ir::Tensor& src, ir::DType type, const ConvertRules& rules,
                                ConvertCounts* counts);

// For a tensor whose bytes are a read-only private file mapping: drops the resident pages that
// lie wholly inside it (madvise DONTNEED; read again from the file if touched). No-op otherwise.
void release_mapped_pages(const ir::Tensor& t);

}  // namespace xopt::passes
