#include "precision/accuracy.h"

#include <algorithm>
#include <cmath>

namespace xopt::precision {

namespace {
nlohmann::json number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json diff_json(const exec::TensorDiff& d) {
  nlohmann::json j = {{"name", d.name},
                      {"dtype", std::string(ir::dtype_name(d.dtype))},
                      {"dims", d.dims},
                      {"ok", d.ok}};
  if (!d.problem.empty()) {
    j["problem"] = d.problem;
    return j;
  }
  j["max_abs"] = number(d.max_abs);
  j["max_rel"] = number(d.max_rel);
  j["max_ref"] = number(d.max_ref);
  j["cosine"] = number(d.cosine);
  j["worst_index"] = d.worst_index;
  j["unequal"] = d.unequal;
  j["nonfinite_mismatch"] = d.nonfinite_mismatch;
  const exec::AccuracyStats& s = d.accuracy;
  if (s.measured) {
    j["mean_abs"] = number(s.mean_abs);
    j["median_abs"] = number(s.median_abs);
    j["p99_abs"] = number(s.p99_abs);
    j["nan"] = s.nan;
    j["inf"] = s.inf;
    j["ref_nan"] = s.ref_nan;
    j["ref_inf"] = s.ref_inf;
    j["top1"] = s.top1 < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.top1);
    j["top5"] = s.top5 < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.top5);
    j["rows"] = s.rows;
  }
  return j;
}

nlohmann::json accuracy_json(const std::vector<AccuracyTable>& tables,
                             const exec::CompareTolerance& tolerance) {
  nlohmann::json j;
  j["format"] = "xopt.accuracy";
  j["version"] = 1;
  j["tolerance"] = {{"rtol", tolerance.rtol}, {"atol", tolerance.atol}};
  bool passed = true;
  double max_rel = 0.0, min_cos = 1.0, min_top1 = 1.0;
  int64_t nan = 0, inf = 0;
  bool any_top1 = false;
  nlohmann::json ts = nlohmann::json::array();
  for (const AccuracyTable& t : tables) {
    nlohmann::json outs = nlohmann::json::array();
    for (const exec::TensorDiff& d : t.diffs) {
      outs.push_back(diff_json(d));
      passed = passed && d.ok;
      if (!d.problem.empty()) continue;
      max_rel = std::isnan(d.max_rel) ? INFINITY : std::max(max_rel, d.max_rel);
      min_cos = std::min(min_cos, d.cosine);
      nan += d.accuracy.nan;
      inf += d.accuracy.inf;
      if (d.accuracy.top1 >= 0) {
        any_top1 = true;
        min_top1 = std::min(min_top1, d.accuracy.top1);
      }
    }
    ts.push_back({{"title", t.title}, {"outputs", outs}});
  }
  j["passed"] = passed;
  j["tables"] = ts;
  j["worst"] = {{"max_rel", number(max_rel)},
                {"min_cosine", number(min_cos)},
                {"nan", nan},
                {"inf", inf},
                {"min_top1", any_top1 ? nlohmann::json(min_top1) : nlohmann::json(nullptr)}};
  return j;
}

}  // namespace xopt::precision
