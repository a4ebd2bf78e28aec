// Greedy by breadth: the widest step first, its buffers largest first, best fit.
#include <algorithm>
#include <map>
#include <numeric>

#include "planner/strategies.h"

namespace xopt::planner {

Assignment assign_greedy_by_breadth(const std::vector<Buffer>& buffers) {
  if (buffers.empty()) return {};
  int lo = buffers[0].first, hi = buffers[0].last;
  for (const Buffer& b : buffers) lo = std::min(lo, b.first), hi = std::max(hi, b.last);
  // Buffers live at each step, and that step's breadth (its live bytes).
  const size_t steps = static_cast<size_t>(hi - lo + 1);
  std::vector<std::vector<size_t>> live(steps);
  std::vector<size_t> breadth(steps, 0);
  for (size_t i = 0; i < buffers.size(); ++i)
    for (int t = buffers[i].first; t <= buffers[i].last; ++t) {
      live[static_cast<size_t>(t - lo)].push_back(i);
      breadth[static_cast<size_t>(t - lo)] += buffers[i].size;
    }
  std::vector<size_t> step_order(steps);
  std::iota(step_order.begin(), step_order.end(), 0);
  std::stable_sort(step_order.begin(), step_order.end(),
                   [&](size_t x, size_t y) { return breadth[x] > breadth[y]; });
  Placer placer(buffers);
  for (size_t t : step_order) {
    auto& here = live[t];
    std::stable_sort(here.begin(), here.end(),
                     [&](size_t x, size_t y) { return buffers[x].size > buffers[y].size; });
    for (size_t i : here)
      if (!placer.placed(i)) placer.place(i, placer.find(i, Placer::Fit::kBest));
  }
  return placer.result();
}

}  // namespace xopt::planner
