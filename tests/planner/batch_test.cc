// The batch search: exponential then binary, verified, on synthetic plan callbacks.
#include <gtest/gtest.h>

#include <cmath>

#include "planner/batch.h"

namespace xopt::planner {
namespace {

PlanAtBatch linear(size_t per_item, size_t fixed, int* calls = nullptr) {
  return [=](int64_t batch) -> Result<MemoryPlan> {
    if (calls) ++*calls;
    MemoryPlan p;
    p.arena_bytes = fixed + per_item * static_cast<size_t>(batch);
    p.workspace_bytes = 1000;
    p.batch = batch;
    return p;
  };
}

TEST(Batch, FindsTheLargestBatchThatFits) {
  BatchBudget budget{1'000'000, 100'000, 200'000};
  int calls = 0;
  auto fit = max_batch(budget, linear(3000, 5000, &calls));
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  // 100000 + 200000 + 1000 + 5000 + 3000 b <= 1000000  =>  b <= 231.33
  EXPECT_EQ(fit->batch, 231);
  EXPECT_EQ(fit->plan.batch, 231);
  EXPECT_EQ(fit->total_bytes, 100'000u + 200'000u + 1000u + 5000u + 3000u * 231u);
  EXPECT_LE(fit->total_bytes, budget.budget_bytes);
  EXPECT_LT(calls, 20);  // 1..256 doubling, then bisection: not a linear scan
  EXPECT_EQ(static_cast<int>(fit->probes.size()), calls);
}

TEST(Batch, CheckEveryBatchAgainstAScan) {
  for (size_t budget_bytes = 300'000; budget_bytes < 2'000'000; budget_bytes += 77'777) {
    // Slightly superlinear arena, so the footprint is not a straight line.
    PlanAtBatch f = [](int64_t b) -> Result<MemoryPlan> {
      MemoryPlan p;
      p.arena_bytes =
          static_cast<size_t>(2000.0 * b + 15.0 * std::pow(static_cast<double>(b), 1.5));
      return p;
    };
    BatchBudget budget{budget_bytes, 250'000, 0};
    auto fit = max_batch(budget, f);
    ASSERT_TRUE(fit.is_ok());
    int64_t expect = 0;
    for (int64_t b = 1; b < 10000; ++b)
      if (footprint(*f(b), budget.parameter_bytes, 0) <= budget_bytes) expect = b;
    EXPECT_EQ(fit->batch, expect) << budget_bytes;
  }
}

TEST(Batch, NothingFitsOrTheLimitIsReached) {
  auto none = max_batch({1000, 2000, 0}, linear(1, 0));
  ASSERT_TRUE(none.is_ok());
  EXPECT_EQ(none->batch, 0);
  EXPECT_EQ(none->probes.size(), 1u);
  BatchBudget capped{1'000'000'000, 0, 0, 100};
  auto cap = max_batch(capped, linear(10, 0));
  ASSERT_TRUE(cap.is_ok());
  EXPECT_EQ(cap->batch, 100);
  EXPECT_FALSE(max_batch({1000, 0, 0, 0}, linear(1, 0)).is_ok());
}

TEST(Batch, WalksUpWhenTheNextBatchAlsoFits) {
  // The batch limit stops doubling at 6: 1, 2, 4, 6 all fit; the answer is the limit itself.
  BatchBudget budget{1'000'000, 0, 0, 6};
  auto fit = max_batch(budget, linear(100, 0));
  ASSERT_TRUE(fit.is_ok());
  EXPECT_EQ(fit->batch, 6);
  // A footprint that is not monotone (batch 9 needs more than 10): the answer still fits and its
  // successor does not.
  PlanAtBatch dip = [](int64_t b) -> Result<MemoryPlan> {
    MemoryPlan p;
    p.arena_bytes = static_cast<size_t>(b == 9 ? 10'000 : 100 * b);
    return p;
  };
  auto d = max_batch({1500, 0, 0}, dip);
  ASSERT_TRUE(d.is_ok());
  EXPECT_LE(footprint(d->plan, 0, 0), 1500u);
  auto next = dip(d->batch + 1);
  EXPECT_GT(footprint(*next, 0, 0), 1500u);
}

TEST(Batch, PlanningErrorsPropagateWithTheBatch) {
  PlanAtBatch failing = [](int64_t b) -> Result<MemoryPlan> {
    if (b > 4) return invalid_argument("value 'h' has shape [?,3]");
    MemoryPlan p;
    p.arena_bytes = 10;
    return p;
  };
  auto r = max_batch({1'000'000, 0, 0}, failing);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("batch 8"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'h'"), std::string::npos);
}

}  // namespace
}  // namespace xopt::planner
