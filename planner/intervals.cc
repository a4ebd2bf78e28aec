#include "planner/intervals.h"

#include <algorithm>
#include <iterator>
#include <map>
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

bool any_live_overlap(const std::vector<Buffer>& buffers, const std::vector<size_t>& offsets) {
  std::vector<size_t> by_first, by_last;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].size != 0) by_first.push_back(i);
  by_last = by_first;
  std::sort(by_first.begin(), by_first.end(),
            [&](size_t x, size_t y) { return buffers[x].first < buffers[y].first; });
  std::sort(by_last.begin(), by_last.end(),
            [&](size_t x, size_t y) { return buffers[x].last < buffers[y].last; });
  // The buffers live at the current step, by offset -> end. While no two overlap they are
  // disjoint, so a new one can only meet its neighbours.
  std::map<size_t, size_t> live;
  size_t gone = 0;
  for (size_t i : by_first) {
    const Buffer& b = buffers[i];
    for (; gone < by_last.size() && buffers[by_last[gone]].last < b.first; ++gone)
      live.erase(offsets[by_last[gone]]);
    const size_t begin = offsets[i], end = offsets[i] + b.size;
    auto next = live.lower_bound(begin);
    if (next != live.end() && next->first < end) return true;
    if (next != live.begin() && std::prev(next)->second > begin) return true;
    live.emplace_hint(next, begin, end);
  }
  return false;
}

Status check_assignment(const std::vector<Buffer>& buffers, const Assignment& a) {
  if (a.offsets.size() != buffers.size())
    return internal_error("assignment has " + std::to_string(a.offsets.size()) + " offsets for " +
                          std::to_string(buffers.size()) + " buffers");
  for (size_t i = 0; i < buffers.size(); ++i)
    if (a.offsets[i] + buffers[i].size > a.arena)
      return internal_error("buffer " + std::to_string(i) + " ends past the arena");
  if (!any_live_overlap(buffers, a.offsets)) return Status::ok();
  // Name the pair: the first one found sweeping by offset.
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return a.offsets[x] < a.offsets[y]; });
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
  return internal_error("two buffers live together overlap");
}

Placer::Placer(const std::vector<Buffer>& buffers)
    : buffers_(buffers),
      offsets_(buffers.size(), 0),
      placed_(buffers.size(), false),
      indexed_(buffers.size(), false) {
  if (buffers.empty()) return;
  int lo = buffers[0].first, hi = buffers[0].last;
  for (const Buffer& b : buffers) lo = std::min(lo, b.first), hi = std::max(hi, b.last);
  lo_ = lo;
  while (leaves_ < static_cast<size_t>(hi - lo + 1)) leaves_ *= 2;
  head_.assign(2 * leaves_, -1);
  by_first_.resize(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) by_first_[i] = static_cast<uint32_t>(i);
  std::stable_sort(by_first_.begin(), by_first_.end(),
                   [&](uint32_t x, uint32_t y) { return buffers[x].first < buffers[y].first; });
}

void Placer::index(size_t i) {
  if (indexed_[i] || buffers_[i].size == 0) return;
  indexed_[i] = true;
  auto add = [&](size_t node) {
    entries_.emplace_back(static_cast<uint32_t>(i), head_[node]);
    head_[node] = static_cast<int32_t>(entries_.size() - 1);
  };
  // The canonical cover of [first, last] in a bottom-up segment tree.
  size_t l = static_cast<size_t>(buffers_[i].first - lo_) + leaves_;
  size_t r = static_cast<size_t>(buffers_[i].last - lo_) + leaves_ + 1;
  for (; l < r; l /= 2, r /= 2) {
    if (l & 1) add(l++);
    if (r & 1) add(--r);
  }
}

template <typename F>
void Placer::for_each_placed_live(int first, int last, const F& f) const {
  if (head_.empty()) return;
  // Live at `first`: listed on the path from its leaf up.
  for (size_t node = static_cast<size_t>(first - lo_) + leaves_; node >= 1; node /= 2)
    for (int32_t e = head_[node]; e >= 0; e = entries_[static_cast<size_t>(e)].second) {
      const size_t k = entries_[static_cast<size_t>(e)].first;
      if (placed_[k]) f(k);
    }
  // Starting after `first`, no later than `last`.
  auto it = std::upper_bound(by_first_.begin(), by_first_.end(), first,
                             [&](int s, uint32_t k) { return s < buffers_[k].first; });
  for (; it != by_first_.end() && buffers_[*it].first <= last; ++it)
    if (placed_[*it] && buffers_[*it].size != 0) f(*it);
}

size_t Placer::find(size_t i, Fit fit) const {
  const Buffer& b = buffers_[i];
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of overlapping placed buffers
  for_each_placed_live(b.first, b.last, [&](size_t k) {
    busy.emplace_back(offsets_[k], offsets_[k] + buffers_[k].size);
  });
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
  index(i);
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
