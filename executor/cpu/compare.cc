#include "executor/cpu/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

#include "executor/cpu/broadcast.h"

namespace xopt::exec {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Element i as double; bool as 0/1.
double element(const ir::Tensor& t, int64_t i) {
  if (t.dtype() == ir::DType::kBool) return t.data<uint8_t>()[i] != 0 ? 1.0 : 0.0;
  return t.as_double(i);
}

bool same_element_bits(const ir::Tensor& a, const ir::Tensor& b, int64_t i) {
  if (a.dtype() == ir::DType::kBool)
    return (a.data<uint8_t>()[i] != 0) == (b.data<uint8_t>()[i] != 0);
  const size_t es = ir::dtype_size(a.dtype());
  return std::memcmp(static_cast<const std::byte*>(a.raw_data()) + static_cast<size_t>(i) * es,
                     static_cast<const std::byte*>(b.raw_data()) + static_cast<size_t>(i) * es,
                     es) == 0;
}

void compare_strings(const ir::Tensor& a, const ir::Tensor& b, TensorDiff& d) {
  for (size_t i = 0; i < a.strings().size(); ++i) {
    if (a.strings()[i] == b.strings()[i]) continue;
    if (d.worst_index < 0) d.worst_index = static_cast<int64_t>(i);
    ++d.unequal;
  }
  d.cosine = d.unequal == 0 ? 1.0 : 0.0;
  d.ok = d.unequal == 0;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

TensorDiff compare_tensors(const std::string& name, const ir::Tensor& actual,
                           const ir::Tensor& expected, const CompareTolerance& tol) {
  TensorDiff d;
  d.name = name;
  d.dtype = actual.dtype();
  d.dims = actual.dims();
  if (actual.dtype() != expected.dtype()) {
    d.problem = "dtype " + std::string(ir::dtype_name(actual.dtype())) + ", expected " +
                std::string(ir::dtype_name(expected.dtype()));
    return d;
  }
  if (actual.dims() != expected.dims()) {
    d.problem = "shape " + ir::dims_string(actual.dims()) + ", expected " +
                ir::dims_string(expected.dims());
    return d;
  }
  if (actual.dtype() == ir::DType::kString) {
    compare_strings(actual, expected, d);
    return d;
  }
  const bool fl = ir::is_float(actual.dtype());
  const int64_t n = actual.numel();
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = element(actual, i), b = element(expected, i);
    const bool equal =
        fl ? (a == b || (std::isnan(a) && std::isnan(b))) : same_element_bits(actual, expected, i);
    if (!equal) ++d.unequal;
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (!equal) {
        ++d.nonfinite_mismatch;
        d.max_abs = kInf;
        d.worst_index = i;
      }
      continue;
    }
    d.max_ref = std::max(d.max_ref, std::fabs(b));
    dot += a * b;
    na += a * a;
    nb += b * b;
    const double err = std::fabs(a - b);
    if (!equal && (err > d.max_abs || d.worst_index < 0) && !std::isinf(d.max_abs)) {
      d.max_abs = std::max(d.max_abs, err);
      d.worst_index = i;
    }
  }
  if (d.max_abs == 0.0)
    d.max_rel = 0.0;
  else
    d.max_rel = d.max_ref > 0.0 ? d.max_abs / d.max_ref : kInf;
  if (na == 0.0 && nb == 0.0)
    d.cosine = 1.0;
  else if (na == 0.0 || nb == 0.0)
    d.cosine = 0.0;
  else
    d.cosine = dot / (std::sqrt(na) * std::sqrt(nb));
  if (fl) d.accuracy = accuracy_stats(actual, expected);
  if (fl)
    d.ok = d.nonfinite_mismatch == 0 && d.max_abs <= tol.atol + tol.rtol * d.max_ref;
  else
    d.ok = d.unequal == 0;
  return d;
}

bool all_ok(const std::vector<TensorDiff>& diffs) {
  return std::all_of(diffs.begin(), diffs.end(), [](const TensorDiff& d) { return d.ok; });
}

std::string format_diff_table(const std::vector<TensorDiff>& diffs, const CompareTolerance& tol,
                              const std::string& title) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"output", "type", "max abs", "max rel", "cosine", "result"});
  for (const TensorDiff& d : diffs) {
    std::string type = std::string(ir::dtype_name(d.dtype)) + ir::dims_string(d.dims);
    if (!d.problem.empty()) {
      rows.push_back({d.name, type, "-", "-", "-", "MISMATCH: " + d.problem});
      continue;
    }
    std::string verdict = d.ok ? "ok" : "MISMATCH";
    if (!d.ok && d.nonfinite_mismatch > 0)
      verdict += " (" + std::to_string(d.nonfinite_mismatch) + " NaN/inf differ)";
    else if (!d.ok && !ir::is_float(d.dtype))
      verdict += " (" + std::to_string(d.unequal) + " elements differ)";
    if (!d.ok && d.worst_index >= 0) verdict += " worst at [" + std::to_string(d.worst_index) + "]";
    char cos[32];
    std::snprintf(cos, sizeof cos, "%.7f", d.cosine);
    rows.push_back(
        {d.name, type, format_number(d.max_abs), format_number(d.max_rel), cos, verdict});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::ostringstream o;
  if (!title.empty()) o << title << "\n";
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c)
      line += (c + 1 < r.size() ? pad(r[c], width[c]) + "  " : r[c]);
    o << "  " << line << "\n";
  }
  o << "  rule: float outputs pass when max|a-b| <= atol + rtol*max|ref| (rtol "
    << format_number(tol.rtol) << ", atol " << format_number(tol.atol)
    << "); other types must be equal; max rel = max|a-b| / max|ref|\n";
  return o.str();
}

}  // namespace xopt::exec
