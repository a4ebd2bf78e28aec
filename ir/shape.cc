#include "ir/shape.h"

#include <limits>

namespace xopt::ir {

std::string Dim::to_string() const {
  if (is_known()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

Shape Shape::of(const std::vector<int64_t>& dims) {
  std::vector<Dim> d(dims.begin(), dims.end());
  return Shape(std::move(d));
}

bool Shape::is_static() const {
  if (!has_rank_) return false;
  for (const auto& d : dims_)
    if (!d.is_known()) return false;
  return true;
}

std::vector<int64_t> Shape::static_dims() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const auto& d : dims_) out.push_back(d.value);
  return out;
}

std::optional<int64_t> Shape::numel() const {
  if (!is_static()) return std::nullopt;
  int64_t n = 1;
  for (const auto& d : dims_)
    if (__builtin_mul_overflow(n, d.value, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

std::string Shape::to_string() const {
  if (!has_rank_) return "[*]";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += dims_[i].to_string();
  }
  return s + "]";
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

}  // namespace xopt::ir
