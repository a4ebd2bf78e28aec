#include "planner/intervals.h"

#include <algorithm>
#include <utility>

namespace xopt::planner {

size_t peak_bytes(const std::vector<Buffer>& buffers) {
  // Sweep: +size where a buffer starts, -size one step after it ends.
  std::vector<std::pair<int, long long>> events;
  events.reserve(buffers.size() * 2);
  for (const Buffer& b : buffers) {
    if (b.size == 0) continue;
    events.emplace_back(b.first, static_cast<long long>(b.size));
    events.emplace_back(b.last + 1, -static_cast<long long>(b.size));
  }
  std::sort(events.begin(), events.end());
  long long live = 0, peak = 0;
  for (size_t i = 0; i < events.size();) {
    const int step = events[i].first;
    for (; i < events.size() && events[i].first == step; ++i) live += events[i].second;
    peak = std::max(peak, live);
  }
  return static_cast<size_t>(peak);
}

Status check_assignment(const std::vector<Buffer>& buffers, const Assignment& a) {
  if (a.offsets.size() != buffers.size())
    return internal_error("assignment has " + std::to_string(a.offsets.size()) + " offsets for " +
                          std::to_string(buffers.size()) + " buffers");
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return a.offsets[x] < a.offsets[y]; });
  for (size_t i = 0; i < buffers.size(); ++i)
    if (a.offsets[i] + buffers[i].size > a.arena)
      return internal_error("buffer " + std::to_string(i) + " ends past the arena");
  for (size_t p = 0; p < order.size(); ++p) {
    const size_t x = order[p];
    if (buffers[x].size == 0) continue;
    const size_t end = a.offsets[x] + buffers[x].size;
    for (size_t q = p + 1; q < order.size() && a.offsets[order[q]] < end; ++q) {
      const size_t y = order[q];
      if (buffers[y].size != 0 && live_together(buffers[x], buffers[y]))
        return internal_error("buffers " + std::to_string(x) + " and " + std::to_string(y) +
                              " are live together and overlap");
    }
  }
  return Status::ok();
}

Placer::Placer(const std::vector<Buffer>& buffers)
    : buffers_(buffers), offsets_(buffers.size(), 0), placed_(buffers.size(), false) {}

size_t Placer::find(size_t i, Fit fit) const {
  const Buffer& b = buffers_[i];
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of overlapping placed buffers
  for (size_t k : order_) {
    const Buffer& o = buffers_[k];
    if (o.size != 0 && live_together(o, b)) busy.emplace_back(offsets_[k], offsets_[k] + o.size);
  }
  std::sort(busy.begin(), busy.end());
  size_t top = 0;  // end of the busy bytes seen so far
  size_t best = 0, best_gap = 0;
  bool found = false;
  for (const auto& [begin, end] : busy) {
    if (begin > top) {
      const size_t gap = begin - top;
      if (gap >= b.size) {
        if (fit == Fit::kFirst) return top;
        if (!found || gap < best_gap) best = top, best_gap = gap, found = true;
      }
    }
    top = std::max(top, end);
  }
  return found ? best : top;
}

void Placer::place(size_t i, size_t offset) {
  offsets_[i] = offset;
  placed_[i] = true;
  order_.push_back(i);
}

void Placer::unplace(size_t i) {
  placed_[i] = false;
  order_.erase(std::find(order_.begin(), order_.end(), i));
}

size_t Placer::arena() const {
  size_t arena = 0;
  for (size_t k : order_) arena = std::max(arena, offsets_[k] + buffers_[k].size);
  return arena;
}

Assignment Placer::result() const {
  Assignment a;
  a.offsets = offsets_;
  a.arena = arena();
  return a;
}

}  // namespace xopt::planner
