// The calibration run of `--precision mixed`: the fp32 model runs once per input set on the CPU
// reference executor, and every float value (graph inputs, initializers, node outputs) gets its
// range: the largest |x|, the smallest non-zero |x|, and how many elements would saturate or turn
// subnormal in float16 and in bfloat16. The first input set's tensors are kept, so each node can
// then be run alone on its fp32 inputs (local_error.h) without running the model again.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "ir/tensor.h"

namespace xopt::precision {

struct RangeStats {
  int64_t count = 0;      // elements seen, over every input set
  int64_t nonfinite = 0;  // NaN or inf already in the fp32 run
  double max_abs = 0.0;   // over finite elements
  double min_nonzero_abs = std::numeric_limits<double>::infinity();  // inf when all are zero
  // |x| > 65504 (float16's largest finite value): these become inf in float16.
  int64_t fp16_saturate = 0;
  // 0 < |x| < 2^-14 (float16's smallest normal): these lose bits or flush to zero in float16.
  int64_t fp16_subnormal = 0;
  int64_t bf16_saturate = 0;   // |x| > 3.39e38
  int64_t bf16_subnormal = 0;  // 0 < |x| < 2^-126
  bool is_initializer = false;

  void add(const float* p, int64_t n);
  // Share of the elements seen (0 when none).
  double share(int64_t k) const { return count == 0 ? 0.0 : static_cast<double>(k) / count; }
};

struct Calibration {
  // Per float tensor value, by name.
  std::map<std::string, RangeStats, std::less<>> ranges;
  // Every tensor value of the first input set (graph inputs, initializers, node outputs), by name.
  std::map<std::string, ir::Tensor, std::less<>> values;
  int input_sets = 0;
};

// Where the calibration inputs come from: the test_data_set_* folders of `dir` (or `dir` itself
// when it holds input_0.pb), else seeded random inputs made as `xopt validate` makes them (ids that
// index an embedding stay in range; symbolic dims bound by `shapes`, else 1).
struct CalibrationSource {
  std::string dir;
  uint64_t seed = 0;
  ir::ShapeBindings shapes;
};

// The input sets of `source` for `graph`; `notes` (if given) gets one line saying where they came
// from. Errors name the folder without data sets or the file that cannot be read.
Result<std::vector<std::map<std::string, ir::Tensor>>> calibration_inputs(
    const ir::Graph& graph, const CalibrationSource& source,
    std::vector<std::string>* notes = nullptr);

// Runs `model` in fp32 once per input set and records the ranges (and the first set's tensors).
// Errors are run_model's (a missing input, a node without a CPU kernel) prefixed with
// "calibration run: ".
Result<Calibration> calibrate(const ir::Model& model,
                              const std::vector<std::map<std::string, ir::Tensor>>& input_sets);

}  // namespace xopt::precision
