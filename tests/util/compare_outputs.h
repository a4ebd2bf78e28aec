// The one check every test that compares a model's (or a graph's) outputs with a reference uses.
//
// A float output passes when max|a - b| <= atol + rtol * max|ref| (the project's rule,
// executor/cpu/compare.h) and its cosine similarity to the reference is at least min_cosine. NaN in
// the output, or an infinity where the reference has a finite value, is a mismatch. Other dtypes
// must be equal element for element. With `bitwise`, outputs must be equal bit for bit.
//
// The reference must be able to tell right from wrong, or the check fails saying so: a float
// reference may hold no NaN, and its largest finite magnitude must be above zero and at least
// min_scale_over_atol times atol. (mobilenet_v2's old reference was ~8e-9: against atol 1e-5, an
// all-zero or all-wrong output passed.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "executor/cpu/compare.h"
#include "ir/tensor.h"

namespace xopt::test {

struct OutputTolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
  double min_cosine = 0.9999;
  // max|ref| must be at least this many times atol: atol stays small next to the output's scale.
  double min_scale_over_atol = 100;
  bool bitwise = false;  // outputs equal bit for bit (rtol and atol then unused)
};
inline constexpr OutputTolerance kBitwise{0, 0, 1.0, 100, true};

// "" when the reference is usable: no NaN, and (for floats) max|ref| above zero and well above
// atol; else why not.
inline std::string degenerate_reference(const ir::Tensor& ref, const OutputTolerance& tol) {
  if (!ir::is_float(ref.dtype())) return "";
  int64_t nans = 0;
  double scale = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double v = ref.as_double(i);
    if (std::isnan(v))
      ++nans;
    else if (std::isfinite(v))
      scale = std::max(scale, std::fabs(v));
  }
  if (nans > 0)
    return "the reference holds " + std::to_string(nans) + " NaN of " +
           std::to_string(ref.numel()) + " elements: it cannot tell right from wrong there";
  const double need = tol.bitwise ? 0.0 : tol.min_scale_over_atol * tol.atol;
  if (scale > 0 && scale >= need) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "the reference is degenerate: max|ref| = %.3g, needs to be above zero and at "
                "least %.3g (%.0f x atol %.3g), or any output near zero passes",
                scale, need, tol.min_scale_over_atol, tol.atol);
  return buf;
}

// "" when `got` matches the reference `ref` by the rule above; else what is wrong, naming `name`.
inline std::string output_difference(const ir::Tensor& got, const ir::Tensor& ref,
                                     const OutputTolerance& tol = {},
                                     const std::string& name = "output") {
  if (std::string why = degenerate_reference(ref, tol); !why.empty()) return name + ": " + why;
  const exec::CompareTolerance ct =
      tol.bitwise ? exec::CompareTolerance{0, 0} : exec::CompareTolerance{tol.rtol, tol.atol};
  const exec::TensorDiff d = exec::compare_tensors(name, got, ref, ct);
  if (!d.problem.empty()) return name + ": " + d.problem;
  using exec::format_number;
  const std::string figures = "max abs " + format_number(d.max_abs) + ", max|ref| " +
                              format_number(d.max_ref) + ", max rel " + format_number(d.max_rel) +
                              ", cosine " + std::to_string(d.cosine) + ", worst at [" +
                              std::to_string(d.worst_index) + "]";
  if (d.nonfinite_mismatch > 0)
    return name + ": " + std::to_string(d.nonfinite_mismatch) +
           " NaN or infinite elements where the reference has others (" + figures + ")";
  if (tol.bitwise) {
    if (!got.same_contents(ref))
      return name + ": not bit for bit equal: " + std::to_string(d.unequal) + " elements differ (" +
             figures + ")";
    return "";
  }
  if (!d.ok)
    return name + ": max|a-b| > " + format_number(tol.atol) + " + " + format_number(tol.rtol) +
           " * max|ref| (" + figures + ")";
  if (ir::is_float(ref.dtype()) && d.cosine < tol.min_cosine)
    return name + ": cosine similarity " + std::to_string(d.cosine) + " < " +
           std::to_string(tol.min_cosine) + " (" + figures + ")";
  return "";
}

// Every output of `got` against `ref` (one line per failing output; "" when all match). `names`
// (optional) names the outputs in the message.
inline std::string outputs_difference(const std::vector<ir::Tensor>& got,
                                      const std::vector<ir::Tensor>& ref,
                                      const OutputTolerance& tol = {},
                                      const std::vector<std::string>& names = {}) {
  if (got.size() != ref.size())
    return std::to_string(got.size()) + " outputs, the reference has " + std::to_string(ref.size());
  std::string out;
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : "output " + std::to_string(i);
    std::string why = output_difference(got[i], ref[i], tol, name);
    if (!why.empty()) out += (out.empty() ? "" : "\n") + why;
  }
  return out;
}

// "" when output_difference(mutant, ref, tol) catches each of these broken copies of a correct
// output `got`: all zeros, all NaN, one NaN, one +inf, and every element 1% too large; else which
// one it let through. Model tests call it to prove their comparison can fail on their reference.
inline std::string uncaught_mutations(const ir::Tensor& got, const ir::Tensor& ref,
                                      const OutputTolerance& tol = {}) {
  if ((got.dtype() != ir::DType::kFloat && got.dtype() != ir::DType::kDouble) || got.numel() == 0)
    return "";
  struct Mutation {
    const char* what;
    ir::Tensor t;
  };
  std::vector<Mutation> mutants;
  auto mutant = [&](const char* what, auto&& edit) {
    ir::Tensor t = got;  // shares the bytes until written (copy on write)
    edit(t);
    mutants.push_back({what, std::move(t)});
  };
  auto fill = [](ir::Tensor& t, int64_t i, double v) {
    switch (t.dtype()) {
      case ir::DType::kFloat:
        t.mutable_data<float>()[i] = static_cast<float>(v);
        break;
      case ir::DType::kDouble:
        t.mutable_data<double>()[i] = v;
        break;
      default:
        break;
    }
  };
  const int64_t mid = got.numel() / 2;
  mutant("all zeros", [&](ir::Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) fill(t, i, 0.0);
  });
  mutant("all NaN", [&](ir::Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) fill(t, i, std::nan(""));
  });
  mutant("one NaN", [&](ir::Tensor& t) { fill(t, mid, std::nan("")); });
  mutant("one +inf", [&](ir::Tensor& t) { fill(t, mid, HUGE_VAL); });
  mutant("1% too large", [&](ir::Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) fill(t, i, got.as_double(i) * 1.01);
  });
  std::string out;
  for (const Mutation& m : mutants)
    if (output_difference(m.t, ref, tol).empty())
      out += std::string(out.empty() ? "" : ", ") + m.what;
  return out.empty() ? "" : "the comparison let through: " + out;
}

}  // namespace xopt::test
