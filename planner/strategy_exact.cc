// Exact search for small problems: branch and bound over placement orders, each buffer at the
// lowest offset that fits (see strategies.h for why that loses no optimum).
#include <algorithm>
#include <limits>
#include <numeric>

#include "planner/strategies.h"

namespace xopt::planner {
namespace {

class Search {
 public:
  Search(const std::vector<Buffer>& buffers, size_t best, size_t lower_bound, uint64_t budget)
      : b_(buffers), best_(best), lower_bound_(lower_bound), budget_(budget) {
    const size_t n = b_.size();
    offsets_.assign(n, 0);
    placed_.assign(n, false);
    conflicts_.assign(n, {});
    identical_before_.assign(n, {});
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < n; ++k) {
        if (i == k || !live_together(b_[i], b_[k])) continue;
        conflicts_[i].push_back(k);
        if (k < i && b_[k].size == b_[i].size && b_[k].first == b_[i].first &&
            b_[k].last == b_[i].last)
          identical_before_[i].push_back(k);
      }
    conflict_matrix_.assign(n * n, false);
    for (size_t i = 0; i < n; ++i)
      for (size_t k : conflicts_[i]) conflict_matrix_[i * n + k] = true;
  }

  // Runs the search; true when it finished within the budget.
  bool run() {
    dfs(b_.size(), 0, 0);
    return !aborted_;
  }
  bool improved() const { return improved_; }
  const std::vector<size_t>& best_offsets() const { return best_offsets_; }
  size_t best() const { return best_; }
  uint64_t nodes() const { return nodes_; }

 private:
  // Lowest offset where buffer i fits among the placed buffers live at the same time.
  size_t first_fit(size_t i) const {
    size_t busy_begin[64], busy_end[64];
    size_t m = 0;
    for (size_t k : conflicts_[i])
      if (placed_[k] && b_[k].size != 0)
        busy_begin[m] = offsets_[k], busy_end[m] = offsets_[k] + b_[k].size, ++m;
    // Insertion sort by begin (m is at most the buffer count, which is small here).
    for (size_t x = 1; x < m; ++x)
      for (size_t y = x; y > 0 && busy_begin[y] < busy_begin[y - 1]; --y) {
        std::swap(busy_begin[y], busy_begin[y - 1]);
        std::swap(busy_end[y], busy_end[y - 1]);
      }
    size_t top = 0;
    for (size_t x = 0; x < m; ++x) {
      if (busy_begin[x] >= top + b_[i].size) return top;
      top = std::max(top, busy_end[x]);
    }
    return top;
  }

  void dfs(size_t prev, size_t depth, size_t arena) {
    if (aborted_ || best_ == lower_bound_) return;
    if (++nodes_ > budget_) {
      aborted_ = true;
      return;
    }
    const size_t n = b_.size();
    if (depth == n) {
      if (arena < best_) {
        best_ = arena;
        best_offsets_ = offsets_;
        improved_ = true;
      }
      return;
    }
    // Each unplaced buffer's first fit now; later placements can only push it higher, so the
    // highest of these ends bounds the arena below.
    size_t bound = arena;
    size_t fit[64];
    for (size_t i = 0; i < n; ++i) {
      if (placed_[i]) continue;
      fit[i] = first_fit(i);
      bound = std::max(bound, fit[i] + b_[i].size);
    }
    if (bound >= best_) return;
    size_t children[64];
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
      if (placed_[i]) continue;
      // Adjacent independent placements commute: keep only the increasing one.
      if (prev < n && i < prev && !conflict_matrix_[prev * n + i]) continue;
      // Identical buffers are interchangeable: place them in index order.
      bool skip = false;
      for (size_t k : identical_before_[i]) skip = skip || !placed_[k];
      if (!skip) children[m++] = i;
    }
    std::sort(children, children + m, [&](size_t x, size_t y) {
      return fit[x] != fit[y] ? fit[x] < fit[y] : b_[x].size > b_[y].size;
    });
    for (size_t c = 0; c < m; ++c) {
      const size_t i = children[c];
      offsets_[i] = fit[i];
      placed_[i] = true;
      dfs(i, depth + 1, std::max(arena, fit[i] + b_[i].size));
      placed_[i] = false;
      if (aborted_ || best_ == lower_bound_) return;
    }
  }

  const std::vector<Buffer>& b_;
  size_t best_;
  size_t lower_bound_;
  uint64_t budget_;
  uint64_t nodes_ = 0;
  bool aborted_ = false;
  bool improved_ = false;
  std::vector<size_t> offsets_, best_offsets_;
  std::vector<bool> placed_;
  std::vector<std::vector<size_t>> conflicts_, identical_before_;
  std::vector<bool> conflict_matrix_;
};

}  // namespace

ExactResult assign_exact(const std::vector<Buffer>& buffers, size_t upper_bound,
                         const ExactOptions& options) {
  ExactResult r;
  if (buffers.size() > std::min<size_t>(options.max_buffers, 64)) return r;
  const size_t lower_bound = peak_bytes(buffers);
  const size_t best = upper_bound == 0 ? std::numeric_limits<size_t>::max() : upper_bound;
  if (best <= lower_bound) {
    r.proved = true;
    return r;
  }
  Search search(buffers, best, lower_bound, options.node_budget);
  const bool finished = search.run();
  r.nodes = search.nodes();
  r.proved = finished || search.best() == lower_bound;
  if (search.improved()) {
    Assignment a;
    a.offsets = search.best_offsets();
    a.arena = search.best();
    a.optimal = r.proved;
    r.assignment = std::move(a);
  }
  return r;
}

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"greedy-by-size", "greedy-by-breadth",
                                                 "best-fit-decreasing", "exact", "naive"};
  return names;
}

}  // namespace xopt::planner
