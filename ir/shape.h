// Tensor shapes with static and symbolic dimensions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xopt::ir {

// One dimension: a known size, a named symbol ("batch", "seq"), or unknown.
// The largest dim xopt models (2^40): no tensor that fits a machine has a longer axis, and with
// every dim at most this, sums and products of a dim with a window attribute (at most kMaxWindow)
// stay inside int64. The verifier refuses a declared dim past it, shape inference an inferred one.
inline constexpr int64_t kMaxDim = int64_t{1} << 40;
// The largest rank a shape input (Reshape, Expand, ConstantOfShape...) may give: past 64 only
// dims of 0 and 1 can fit in memory; the bound keeps a declared [2^50] shape input from asking
// for that many dims.
inline constexpr int64_t kMaxRank = 256;
// The largest window attribute (a kernel size, stride, dilation, pad, group, block size): 2^20.
inline constexpr int64_t kMaxWindow = int64_t{1} << 20;

struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // non-empty for a symbolic dim (value < 0)

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT(google-explicit-constructor)
  static Dim symbolic(std::string name) {
    Dim d;
    d.symbol = std::move(name);
    return d;
  }
  bool is_known() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !symbol.empty(); }
  bool operator==(const Dim& o) const {
    return is_known() ? value == o.value : (!o.is_known() && symbol == o.symbol && !symbol.empty());
  }
  std::string to_string() const;
};

// A shape of known or unknown rank.
class Shape {
 public:
  Shape() = default;  // unknown rank
  explicit Shape(std::vector<Dim> dims) : has_rank_(true), dims_(std::move(dims)) {}
  static Shape of(const std::vector<int64_t>& dims);
  static Shape scalar() { return Shape(std::vector<Dim>{}); }

  bool has_rank() const { return has_rank_; }
  size_t rank() const { return dims_.size(); }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& mutable_dims() { return dims_; }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  Dim& operator[](size_t i) { return dims_[i]; }

  // True when the rank and every dim are known.
  bool is_static() const;
  // The dims as integers; only valid when is_static().
  std::vector<int64_t> static_dims() const;
  // Element count when static; INT64_MAX when the product overflows (the verifier refuses such
  // shapes by name).
  std::optional<int64_t> numel() const;

  bool operator==(const Shape& o) const { return has_rank_ == o.has_rank_ && dims_ == o.dims_; }
  // "[1,3,224,224]", "[batch,128]", "[?,?]", "[*]" for unknown rank.
  std::string to_string() const;

 private:
  bool has_rank_ = false;
  std::vector<Dim> dims_;
};

// Product of dims (1 for a scalar); INT64_MAX when it overflows.
int64_t numel(const std::vector<int64_t>& dims);

}  // namespace xopt::ir
