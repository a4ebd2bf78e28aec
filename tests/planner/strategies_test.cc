// Offset strategies on random interval problems: valid, never below the lower bound, and the exact
// search matches an exhaustive search on tiny problems.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "planner/strategies.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::brute_force_arena;
using test::random_buffers;

TEST(Intervals, PeakBytesCountsBuffersLiveAtTheSameStep) {
  // a [0,2] 100, b [1,1] 50, c [2,3] 30: step 1 holds a+b = 150, step 2 holds a+c = 130.
  std::vector<Buffer> b = {{100, 0, 2}, {50, 1, 1}, {30, 2, 3}};
  EXPECT_EQ(peak_bytes(b), 150u);
  EXPECT_EQ(peak_bytes({}), 0u);
  EXPECT_EQ(peak_bytes({{64, -1, -1}, {64, 0, 0}}), 64u);
}

TEST(Intervals, CheckAssignmentNamesOverlappingBuffers) {
  std::vector<Buffer> b = {{100, 0, 2}, {50, 1, 1}};
  Assignment bad{{0, 64}, 200, false};
  Status s = check_assignment(b, bad);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("buffers 0 and 1"), std::string::npos) << s.message();
  EXPECT_TRUE(check_assignment(b, {{0, 100}, 150, false}).is_ok());
  EXPECT_FALSE(check_assignment(b, {{0, 100}, 149, false}).is_ok());  // past the arena
}

TEST(Intervals, PlacerFirstFitAndBestFitChooseDifferentGaps) {
  // Busy [0,100) and [300,350) and [400,1000) at step 0; gaps [100,300) of 200 and [350,400) of 50.
  std::vector<Buffer> b = {{100, 0, 0}, {50, 0, 0}, {600, 0, 0}, {40, 0, 0}};
  Placer p(b);
  p.place(0, 0);
  p.place(1, 300);
  p.place(2, 400);
  EXPECT_EQ(p.find(3, Placer::Fit::kFirst), 100u);
  EXPECT_EQ(p.find(3, Placer::Fit::kBest), 350u);
  EXPECT_EQ(p.arena(), 1000u);
}

// The sweep and the step index against their definitions, pair by pair, on random problems with
// zero sizes and shared offsets: any_live_overlap is "some pair live together shares bytes", and
// Placer::find is the gap search among every placed buffer live together with the new one.
TEST(Intervals, SweepAndPlacerIndexMatchThePairwiseDefinitions) {
  std::mt19937 rng(7);
  int overlapping = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    auto buffers = random_buffers(rng, 1 + static_cast<int>(rng() % 30),
                                  2 + static_cast<int>(rng() % 40), 6, 8);
    for (Buffer& b : buffers)
      if (rng() % 10 == 0) b.size = 0;
    std::vector<size_t> offsets(buffers.size());
    for (size_t& o : offsets) o = 8 * (rng() % 12);
    bool expected = false;
    for (size_t x = 0; x < buffers.size(); ++x)
      for (size_t y = x + 1; y < buffers.size(); ++y)
        expected = expected || (buffers[x].size != 0 && buffers[y].size != 0 &&
                                live_together(buffers[x], buffers[y]) &&
                                offsets[x] < offsets[y] + buffers[y].size &&
                                offsets[y] < offsets[x] + buffers[x].size);
    ASSERT_EQ(any_live_overlap(buffers, offsets), expected) << "iteration " << iter;
    overlapping += expected;
    size_t arena = 0;
    for (size_t i = 0; i < buffers.size(); ++i)
      arena = std::max(arena, offsets[i] + buffers[i].size);
    EXPECT_EQ(check_assignment(buffers, {offsets, arena, false}).is_ok(), !expected);

    // Place a random half at random offsets, then ask for a gap for each of the others.
    Placer placer(buffers);
    std::vector<size_t> placed;
    for (size_t i = 0; i < buffers.size(); ++i)
      if (rng() % 2 == 0) placer.place(i, offsets[i]), placed.push_back(i);
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (placer.placed(i)) continue;
      std::vector<std::pair<size_t, size_t>> busy;
      for (size_t k : placed)
        if (buffers[k].size != 0 && live_together(buffers[k], buffers[i]))
          busy.emplace_back(offsets[k], offsets[k] + buffers[k].size);
      std::sort(busy.begin(), busy.end());
      for (const Placer::Fit fit : {Placer::Fit::kFirst, Placer::Fit::kBest}) {
        size_t top = 0, best = 0, best_gap = 0;
        bool found = false;
        for (const auto& [begin, end] : busy) {
          if (begin > top && begin - top >= buffers[i].size) {
            if (fit == Placer::Fit::kFirst) {
              best = top, found = true;
              break;
            }
            if (!found || begin - top < best_gap) best = top, best_gap = begin - top, found = true;
          }
          top = std::max(top, end);
        }
        EXPECT_EQ(placer.find(i, fit), found ? best : top) << "iteration " << iter;
      }
    }
  }
  EXPECT_GT(overlapping, 100);
  EXPECT_LT(overlapping, 1900);
}

TEST(Strategies, GreedyBySizeReusesDeadBuffers) {
  // A chain a -> b -> c: a and c may share.
  std::vector<Buffer> b = {{256, 0, 1}, {512, 1, 2}, {256, 2, 3}};
  Assignment a = assign_greedy_by_size(b);
  EXPECT_EQ(a.arena, 768u);
  EXPECT_EQ(a.offsets[0], a.offsets[2]);
  EXPECT_EQ(assign_naive(b).arena, 1024u);
}

TEST(Strategies, EveryStrategyIsValidAndAboveTheLowerBound) {
  std::mt19937 rng(1234);
  int exact_runs = 0, exact_better = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const int count = 1 + static_cast<int>(rng() % 14);
    auto buffers = random_buffers(rng, count, 2 + static_cast<int>(rng() % 10), 8, 256);
    const size_t lb = peak_bytes(buffers);
    size_t best = SIZE_MAX;
    for (Assignment a : {assign_naive(buffers), assign_greedy_by_size(buffers),
                         assign_greedy_by_breadth(buffers), assign_best_fit_decreasing(buffers)}) {
      ASSERT_TRUE(check_assignment(buffers, a).is_ok()) << "iteration " << iter;
      ASSERT_GE(a.arena, lb) << "iteration " << iter;
      best = std::min(best, a.arena);
    }
    ExactResult r = assign_exact(buffers, best, {12, 20000});
    if (count > 12) {
      EXPECT_FALSE(r.assignment.has_value());
      continue;
    }
    ++exact_runs;
    if (r.assignment) {
      ++exact_better;
      ASSERT_TRUE(check_assignment(buffers, *r.assignment).is_ok()) << "iteration " << iter;
      EXPECT_LT(r.assignment->arena, best);
      EXPECT_GE(r.assignment->arena, lb);
    }
  }
  // The heuristics are not always optimal: the exact search must have improved on some.
  EXPECT_GT(exact_runs, 1000);
  EXPECT_GT(exact_better, 0);
  std::printf("[ planner  ] exact search improved on the best heuristic in %d of %d problems\n",
              exact_better, exact_runs);
}

TEST(Strategies, ExactSearchEqualsExhaustiveSearchOnTinyProblems) {
  std::mt19937 rng(99);
  int proved = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int count = 1 + static_cast<int>(rng() % 6);
    auto buffers = random_buffers(rng, count, 2 + static_cast<int>(rng() % 6), 4, 1);
    const size_t optimum = brute_force_arena(buffers, 1);
    // From scratch (no upper bound) and from the heuristic's arena.
    ExactResult scratch = assign_exact(buffers, 0, {12, 1000000});
    ASSERT_TRUE(scratch.proved);
    ASSERT_TRUE(scratch.assignment.has_value());
    EXPECT_EQ(scratch.assignment->arena, optimum) << "iteration " << iter;
    const size_t heuristic = assign_greedy_by_size(buffers).arena;
    ExactResult r = assign_exact(buffers, heuristic, {12, 1000000});
    ASSERT_TRUE(r.proved);
    EXPECT_EQ(r.assignment ? r.assignment->arena : heuristic, optimum) << "iteration " << iter;
    proved += r.assignment.has_value();
  }
  EXPECT_GT(proved, 0);  // some heuristic results were beaten
}

TEST(Strategies, ExactSearchReportsAnExhaustedBudget) {
  std::mt19937 rng(5);
  bool saw_unproved = false;
  for (int iter = 0; iter < 200 && !saw_unproved; ++iter) {
    auto buffers = random_buffers(rng, 12, 8, 8, 256);
    ExactResult r = assign_exact(buffers, 0, {12, 50});
    EXPECT_LE(r.nodes, 51u);
    saw_unproved = !r.proved;
  }
  EXPECT_TRUE(saw_unproved);
}

}  // namespace
}  // namespace xopt::planner
