// Best fit in decreasing order (XLA's GlobalDecreasingSizeBestFitHeap, spatial and temporal sorts).
#include <algorithm>
#include <numeric>
#include <tuple>

#include "planner/strategies.h"

namespace xopt::planner {
namespace {

Assignment place_in_order(const std::vector<Buffer>& buffers, const std::vector<size_t>& order) {
  Placer placer(buffers);
  for (size_t i : order) placer.place(i, placer.find(i, Placer::Fit::kBest));
  return placer.result();
}

}  // namespace

Assignment assign_best_fit_decreasing(const std::vector<Buffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  auto length = [&](size_t i) { return buffers[i].last - buffers[i].first; };
  // Spatial: size, then live-range length, both descending; index ascending.
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::make_tuple(buffers[y].size, length(y), x) <
           std::make_tuple(buffers[x].size, length(x), y);
  });
  Assignment spatial = place_in_order(buffers, order);
  // Temporal: live-range length, then size, both descending.
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::make_tuple(length(y), buffers[y].size, x) <
           std::make_tuple(length(x), buffers[x].size, y);
  });
  Assignment temporal = place_in_order(buffers, order);
  return temporal.arena < spatial.arena ? temporal : spatial;
}

}  // namespace xopt::planner
