#include "planner/batch.h"

#include <map>

namespace xopt::planner {

size_t footprint(const MemoryPlan& plan, size_t parameter_bytes, size_t cuda_context_bytes) {
  return parameter_bytes + plan.arena_bytes + plan.workspace_bytes + plan.breakdown.io +
         cuda_context_bytes;
}

Result<BatchFit> max_batch(const BatchBudget& budget, const PlanAtBatch& plan_at) {
  if (budget.max_batch < 1)
    return invalid_argument("max_batch: the batch limit must be at least 1");
  BatchFit fit;
  std::map<int64_t, MemoryPlan> plans;
  auto fits = [&](int64_t b) -> Result<bool> {
    auto it = plans.find(b);
    if (it == plans.end()) {
      auto p = plan_at(b);
      if (!p.is_ok())
        return p.status().with_context("planning at batch " + std::to_string(b) + ": ");
      it = plans.emplace(b, std::move(p).value()).first;
      const size_t total = footprint(it->second, budget.parameter_bytes, budget.cuda_context_bytes);
      fit.probes.push_back({b, total, total <= budget.budget_bytes});
    }
    for (const BatchProbe& probe : fit.probes)
      if (probe.batch == b) return probe.fits;
    return internal_error("max_batch: lost a probe");
  };

  XOPT_ASSIGN_OR_RETURN(bool one, fits(1));
  if (!one) return fit;
  // Exponential phase: lo fits, hi does not (or hi is past the limit).
  int64_t lo = 1, hi = 0;
  while (hi == 0) {
    const int64_t next = lo > budget.max_batch / 2 ? budget.max_batch : lo * 2;
    if (next == lo) break;  // lo is the limit
    XOPT_ASSIGN_OR_RETURN(bool ok, fits(next));
    if (ok)
      lo = next;
    else
      hi = next;
  }
  // Binary phase.
  while (hi != 0 && hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    XOPT_ASSIGN_OR_RETURN(bool ok, fits(mid));
    if (ok)
      lo = mid;
    else
      hi = mid;
  }
  // Verification: the footprint is only roughly monotone, so keep walking while the next fits.
  while (lo < budget.max_batch) {
    XOPT_ASSIGN_OR_RETURN(bool ok, fits(lo + 1));
    if (!ok) break;
    ++lo;
  }
  fit.batch = lo;
  fit.plan = plans.at(lo);
  fit.total_bytes = footprint(fit.plan, budget.parameter_bytes, budget.cuda_context_bytes);
  return fit;
}

}  // namespace xopt::planner
