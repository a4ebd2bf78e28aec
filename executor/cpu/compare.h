// Comparing model outputs: how far one tensor is from a reference, in the three figures xopt
// reports everywhere (max abs error, max relative error, cosine similarity), and the pass rule.
//
// Rule (stated once, used by `xopt validate`, `xopt --validate` and the tests):
//   float outputs pass when  max|a - b| <= atol + rtol * max|b|
//   (equivalently max_rel <= rtol + atol / max|b|), with NaN only where the reference has NaN and
//   infinities equal; integer, bool and string outputs must be equal element for element; dtype and
//   shape must be equal. `b` is the reference (the expected output, or model A's output).
// The relative error is taken against the largest reference magnitude, not element by element, so
// outputs with entries near zero (logits, attention scores) are judged at their own scale.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/cpu/accuracy.h"
#include "ir/tensor.h"

namespace xopt::exec {

struct CompareTolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
};

struct TensorDiff {
  std::string name;  // the output's name (as given by the caller)
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;  // of the tensor under test
  // Why the two cannot be compared element by element (dtype or shape differ), else "".
  std::string problem;
  double max_abs = 0.0;      // max |a - b| over finite pairs; +inf when NaN/inf positions differ
  double max_ref = 0.0;      // max |b| over finite reference elements
  double max_rel = 0.0;      // max_abs / max_ref (0 when both are 0, +inf when only max_ref is)
  double cosine = 1.0;       // a.b / (|a| |b|); 1 when both are all zero, 0 when only one is
  int64_t worst_index = -1;  // flat index of max_abs (-1 when every element is equal)
  int64_t unequal = 0;       // elements that differ at all
  int64_t nonfinite_mismatch = 0;  // NaN or inf in one tensor and not the same in the other
  bool ok = false;                 // within tolerance by the rule above
  AccuracyStats accuracy;          // p99, NaN/inf counts, top-1/top-5 (accuracy.h)
};

// Compares `actual` with the reference `expected`.
TensorDiff compare_tensors(const std::string& name, const ir::Tensor& actual,
                           const ir::Tensor& expected, const CompareTolerance& tol = {});

// True when every diff is ok.
bool all_ok(const std::vector<TensorDiff>& diffs);

// A table, one row per output: name, dtype and shape, max abs, max rel, cosine, verdict; then one
// line stating the rule and the tolerances. `title` (if any) heads the table.
std::string format_diff_table(const std::vector<TensorDiff>& diffs, const CompareTolerance& tol,
                              const std::string& title = "");

// "1.23e-05" style number, "inf" and "nan" spelled out.
std::string format_number(double v);

}  // namespace xopt::exec
