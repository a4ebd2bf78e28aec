// Greedy by size, first fit (TFLite micro's GreedyMemoryPlanner).
#include <algorithm>
#include <numeric>

#include "planner/strategies.h"

namespace xopt::planner {

Assignment assign_greedy_by_size(const std::vector<Buffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (buffers[x].size != buffers[y].size) return buffers[x].size > buffers[y].size;
    return buffers[x].first < buffers[y].first;
  });
  Placer placer(buffers);
  for (size_t i : order) placer.place(i, placer.find(i, Placer::Fit::kFirst));
  return placer.result();
}

}  // namespace xopt::planner
