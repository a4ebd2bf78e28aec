// The offset-assignment problem, free of the graph: buffers with a size and an inclusive live range
// of steps. Every strategy maps a list of buffers to offsets such that buffers live at the same
// step do not share bytes. Aliases are already folded into their root before this point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace xopt::planner {

struct Buffer {
  size_t size = 0;  // aligned bytes
  int first = 0;    // first step it is live (-1: before the first node)
  int last = 0;     // last step it is live, inclusive
};

inline bool live_together(const Buffer& a, const Buffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

// One offset per buffer and the arena they need.
struct Assignment {
  std::vector<size_t> offsets;
  size_t arena = 0;
  bool optimal = false;  // proven optimal (exact search finished, or arena equals the lower bound)
};

// Max over steps of the bytes live at that step: no assignment can use a smaller arena.
size_t peak_bytes(const std::vector<Buffer>& buffers);

// Recomputes the arena of `a` from its offsets and proves no two buffers live together overlap; the
// error names both buffers by index. Strategies are checked with it before their result is used.
Status check_assignment(const std::vector<Buffer>& buffers, const Assignment& a);

// True when two buffers of nonzero size, live at a common step, share bytes at `offsets`. A sweep
// over steps keeping the live buffers ordered by offset: O(n log n), where comparing every pair
// that shares bytes is quadratic when many buffers reuse one offset at different steps.
bool any_live_overlap(const std::vector<Buffer>& buffers, const std::vector<size_t>& offsets);

// Places buffers one at a time among those already placed. Gaps are looked for only among buffers
// whose live range overlaps the new one, as in TFLite's arena planner and XLA's heap simulator;
// those are found through an index over steps, so placing n buffers costs O(n log n) plus the
// number of pairs live together, not O(n^2).
class Placer {
 public:
  enum class Fit { kFirst, kBest };  // lowest gap that fits, or smallest gap that fits
  explicit Placer(const std::vector<Buffer>& buffers);

  // The offset `fit` would choose for buffer `i` (the top of the overlapping buffers if no gap
  // fits).
  size_t find(size_t i, Fit fit) const;
  void place(size_t i, size_t offset);
  void unplace(size_t i);  // for backtracking searches
  bool placed(size_t i) const { return placed_[i]; }
  // The highest end among placed buffers.
  size_t arena() const;
  Assignment result() const;

 private:
  // Calls f(k) for every placed buffer k of nonzero size live at some step of [first, last].
  template <typename F>
  void for_each_placed_live(int first, int last, const F& f) const;
  void index(size_t i);

  const std::vector<Buffer>& buffers_;
  std::vector<size_t> offsets_;
  std::vector<bool> placed_;
  std::vector<size_t> order_;  // placed buffers, in placement order
  // A segment tree over the steps [lo_, lo_ + leaves_): each buffer placed at least once is listed
  // at the O(log steps) tree nodes that cover its live range, so the buffers live at one step are
  // on the path from that step's leaf to the root, each once. Lists are linked through entries_.
  int lo_ = 0;
  size_t leaves_ = 1;
  std::vector<int32_t> head_;                          // per tree node: first entry, or -1
  std::vector<std::pair<uint32_t, int32_t>> entries_;  // buffer, next entry (-1: end)
  std::vector<bool> indexed_;
  // Every buffer by first step (ties by index): those starting inside a range are contiguous.
  std::vector<uint32_t> by_first_;
};

inline size_t align_up(size_t bytes, size_t alignment) {
  return alignment <= 1 ? bytes : (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace xopt::planner
