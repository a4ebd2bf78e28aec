// The offset-assignment problem, free of the graph: buffers with a size and an inclusive live range
// of steps. Every strategy maps a list of buffers to offsets such that buffers live at the same
// step do not share bytes. Aliases are already folded into their root before this point.
#pragma once

#include <cstddef>
#include <string>
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

// Places buffers one at a time among those already placed. Gaps are looked for only among buffers
// whose live range overlaps the new one, as in TFLite's arena planner and XLA's heap simulator.
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
  const std::vector<Buffer>& buffers_;
  std::vector<size_t> offsets_;
  std::vector<bool> placed_;
  std::vector<size_t> order_;  // placed buffers, in placement order
};

inline size_t align_up(size_t bytes, size_t alignment) {
  return alignment <= 1 ? bytes : (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace xopt::planner
