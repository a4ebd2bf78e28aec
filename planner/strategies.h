// Offset-assignment strategies, one per file. Each is a pure function of the buffers; the planner
// runs them all and keeps the smallest arena.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/intervals.h"

namespace xopt::planner {

// Every buffer gets its own bytes: the baseline the others are measured against.
Assignment assign_naive(const std::vector<Buffer>& buffers);

// TFLite's greedy offset planner (micro GreedyMemoryPlanner): largest first, ties by first use,
// each at the lowest offset that fits between buffers live at the same time.
Assignment assign_greedy_by_size(const std::vector<Buffer>& buffers);

// "Greedy by breadth" (TFLite GPU memory management, Pisarchyk & Lee 2020) adapted to offsets:
// visit steps from the one with the most live bytes down; at each, place its unplaced buffers
// largest first, each in the smallest gap that fits.
Assignment assign_greedy_by_breadth(const std::vector<Buffer>& buffers);

// XLA's GlobalDecreasingSizeBestFitHeap: buffers sorted by size (spatial) or by live-range length
// (temporal), each in the smallest gap that fits; both orders are tried and the better one kept.
Assignment assign_best_fit_decreasing(const std::vector<Buffer>& buffers);

struct ExactOptions {
  size_t max_buffers = 12;        // larger problems are not searched (nullopt)
  uint64_t node_budget = 200000;  // placements tried before giving up the proof
};

// Branch and bound over the order in which buffers are placed, each at the lowest offset that fits:
// some order yields every optimal arena (place the buffers of an optimal assignment by increasing
// offset: each lands at or below its offset there). `upper_bound` (an arena already reached, 0 for
// none) prunes the search. Returns nullopt for too many buffers or when nothing below `upper_bound`
// exists and the search finished (the caller's arena is then proven optimal: see `proved`).
struct ExactResult {
  std::optional<Assignment> assignment;  // strictly better than upper_bound, when found
  bool proved = false;                   // the search finished: the best arena found is optimal
  uint64_t nodes = 0;
};
ExactResult assign_exact(const std::vector<Buffer>& buffers, size_t upper_bound,
                         const ExactOptions& options = {});

// The strategy names, in the order the planner runs them (ties keep the earlier one).
const std::vector<std::string>& strategy_names();

}  // namespace xopt::planner
