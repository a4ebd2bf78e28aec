#include "executor/cpu/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "executor/cpu/compare.h"

namespace xopt::exec {

namespace {

// The indices of the k largest of row[0..c), largest first (ties: the lower index first).
std::vector<int64_t> top_k(const std::vector<double>& v, int64_t begin, int64_t c, int64_t k) {
  std::vector<int64_t> idx(static_cast<size_t>(c));
  std::iota(idx.begin(), idx.end(), 0);
  auto greater = [&](int64_t x, int64_t y) {
    const double a = v[begin + x], b = v[begin + y];
    // NaN sorts last.
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    return a > b || (a == b && x < y);
  };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), greater);
  idx.resize(static_cast<size_t>(k));
  return idx;
}

std::string percent(double share) {
  if (share < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

}  // namespace

AccuracyStats accuracy_stats(const ir::Tensor& actual, const ir::Tensor& expected) {
  AccuracyStats s;
  if (!ir::is_float(actual.dtype()) || actual.dtype() != expected.dtype() ||
      actual.dims() != expected.dims())
    return s;
  s.measured = true;
  const int64_t n = actual.numel();
  std::vector<double> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  std::vector<double> err;
  err.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    a[i] = actual.as_double(i);
    b[i] = expected.as_double(i);
    s.nan += std::isnan(a[i]) ? 1 : 0;
    s.inf += std::isinf(a[i]) ? 1 : 0;
    s.ref_nan += std::isnan(b[i]) ? 1 : 0;
    s.ref_inf += std::isinf(b[i]) ? 1 : 0;
    if (std::isfinite(a[i]) && std::isfinite(b[i])) err.push_back(std::fabs(a[i] - b[i]));
  }
  if (!err.empty()) {
    s.mean_abs = std::accumulate(err.begin(), err.end(), 0.0) / static_cast<double>(err.size());
    auto rank = [&](double q) {
      // Nearest rank: the smallest value with at least q of the elements at or below it.
      size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(err.size())));
      k = std::clamp<size_t>(k, 1, err.size()) - 1;
      std::nth_element(err.begin(), err.begin() + static_cast<std::ptrdiff_t>(k), err.end());
      return err[k];
    };
    s.median_abs = rank(0.5);
    s.p99_abs = rank(0.99);
  }
  const auto& dims = actual.dims();
  if (!dims.empty() && dims.size() <= 3 && dims.back() >= 2) {
    const int64_t c = dims.back();
    s.rows = c == 0 ? 0 : n / c;
    int64_t same1 = 0, same5 = 0;
    for (int64_t r = 0; r < s.rows; ++r) {
      same1 += top_k(a, r * c, c, 1)[0] == top_k(b, r * c, c, 1)[0] ? 1 : 0;
      if (c >= 5) {
        std::vector<int64_t> ta = top_k(a, r * c, c, 5), tb = top_k(b, r * c, c, 5);
        std::sort(ta.begin(), ta.end());
        std::sort(tb.begin(), tb.end());
        same5 += ta == tb ? 1 : 0;
      }
    }
    if (s.rows > 0) {
      s.top1 = static_cast<double>(same1) / static_cast<double>(s.rows);
      if (c >= 5) s.top5 = static_cast<double>(same5) / static_cast<double>(s.rows);
    }
  }
  return s;
}

std::string format_accuracy_table(const std::vector<TensorDiff>& diffs) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"output", "mean abs", "median abs", "p99 abs", "NaN", "inf", "top-1", "top-5"});
  for (const TensorDiff& d : diffs) {
    const AccuracyStats& s = d.accuracy;
    if (!s.measured) continue;
    rows.push_back({d.name, format_number(s.mean_abs), format_number(s.median_abs),
                    format_number(s.p99_abs), std::to_string(s.nan), std::to_string(s.inf),
                    percent(s.top1), percent(s.top5)});
  }
  if (rows.size() == 1) return "";
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::ostringstream o;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      std::string cell = r[c];
      if (c + 1 < r.size()) cell += std::string(width[c] - r[c].size() + 2, ' ');
      line += cell;
    }
    o << "  " << line << "\n";
  }
  o << "  top-1: rows whose argmax agrees; top-5: rows whose five largest classes agree (as "
       "sets)\n";
  return o.str();
}

}  // namespace xopt::exec
