// Accuracy figures beyond compare.h's pass rule, for judging a converted (fp16, bf16, mixed)
// model against its fp32 reference the way Polygraphy reports it: mean, median and p99 of |a - b|,
// NaN and inf counts, and for classifier-shaped outputs how often the top-1 class and the top-5
// set agree with the reference's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace xopt::exec {

struct TensorDiff;

struct AccuracyStats {
  bool measured = false;  // float outputs of the same dtype and shape only
  double mean_abs = 0.0;  // over elements where both are finite
  double median_abs = 0.0;
  double p99_abs = 0.0;  // the 99th percentile of |a - b| (nearest rank)
  int64_t nan = 0;       // NaN in the tensor under test
  int64_t inf = 0;       // inf in the tensor under test
  int64_t ref_nan = 0;
  int64_t ref_inf = 0;
  // Classifier-shaped outputs (rank 1 to 3, last dim C >= 2; each row of C is one prediction):
  // the share of rows whose argmax equals the reference's, and (C >= 5) whose five largest classes
  // are the reference's five, as sets. -1 when the output is not classifier-shaped.
  int64_t rows = 0;
  double top1 = -1.0;
  double top5 = -1.0;
};

// The figures for `actual` against the reference `expected` (float tensors of equal dtype and
// dims; otherwise measured stays false).
AccuracyStats accuracy_stats(const ir::Tensor& actual, const ir::Tensor& expected);

// One row per output: p99 abs, mean abs, NaN/inf counts, top-1 and top-5 agreement.
std::string format_accuracy_table(const std::vector<TensorDiff>& diffs);

}  // namespace xopt::exec
