#include "ir/ops/op_helpers.h"

#include <algorithm>

namespace xopt::ir::ops {

std::optional<Dim> broadcast_dim(const Dim& a, const Dim& b) {
  if (a.is_known() && a.value == 1) return b;
  if (b.is_known() && b.value == 1) return a;
  if (a.is_known() && b.is_known()) {
    if (a.value != b.value) return std::nullopt;
    return a;
  }
  // One side known (and not 1): the other must be 1 or equal at run time, so the result is known.
  if (a.is_known()) return a;
  if (b.is_known()) return b;
  if (a == b) return a;  // the same symbol
  return Dim();
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

namespace {
Dim bounded(std::optional<int64_t> v) {
  return v && *v <= kMaxDim ? Dim(*v) : Dim();
}
}  // namespace

Dim add_dims(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return bounded(checked_add(a.value, b.value));
  if (a.is_known() && a.value == 0) return b;
  if (b.is_known() && b.value == 0) return a;
  return Dim();
}

Dim mul_dims(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return bounded(checked_mul(a.value, b.value));
  if (a.is_known() && a.value == 1) return b;
  if (b.is_known() && b.value == 1) return a;
  return Dim();
}

Result<size_t> rank_of_shape_input(const InferenceContext& ctx, const Dim& len) {
  if (!len.is_known() || len.value > kMaxRank)
    return ctx.error("the shape input has " + len.to_string() +
                     " elements: a rank past xopt's limit of " + std::to_string(kMaxRank));
  return static_cast<size_t>(len.value);
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  if (!a.has_rank() || !b.has_rank()) return Shape();
  size_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim one(1);
    const Dim& da = i < rank - a.rank() ? one : a[i - (rank - a.rank())];
    const Dim& db = i < rank - b.rank() ? one : b[i - (rank - b.rank())];
    auto d = broadcast_dim(da, db);
    if (!d)
      return invalid_model("shapes " + str(a) + " and " + str(b) +
                           " cannot be broadcast (dimension " + std::to_string(i) + ": " +
                           da.to_string() + " vs " + db.to_string() + ")");
    out[i] = *d;
  }
  return Shape(std::move(out));
}

Status check_unidirectional(const Shape& a, const Shape& b) {
  if (!a.has_rank() || !b.has_rank()) return Status::ok();
  if (b.rank() > a.rank())
    return invalid_model("shape " + str(b) + " cannot be broadcast to " + str(a) +
                         " (higher rank)");
  size_t off = a.rank() - b.rank();
  for (size_t i = 0; i < b.rank(); ++i) {
    const Dim& da = a[off + i];
    const Dim& db = b[i];
    if (db.is_known() && db.value != 1 && da.is_known() && da.value != db.value)
      return invalid_model("shape " + str(b) + " cannot be broadcast to " + str(a));
  }
  return Status::ok();
}

void DimProduct::mul(const Dim& d) {
  if (d.is_known()) {
    // A product past int64 (a hostile model's dims) says nothing: unknown, never wrapped. What
    // the dims are is judged where they are used (the verifier refuses such a tensor).
    if (__builtin_mul_overflow(factor, d.value, &factor)) unknown = true;
  } else if (d.is_symbolic()) {
    symbols.push_back(d.symbol);
  } else {
    unknown = true;
  }
}

std::optional<DimProduct> DimProduct::div(const DimProduct& o) const {
  if (unknown || o.unknown || o.factor == 0) return std::nullopt;
  DimProduct r = *this;
  for (const auto& s : o.symbols) {
    auto it = std::find(r.symbols.begin(), r.symbols.end(), s);
    if (it == r.symbols.end()) return std::nullopt;
    r.symbols.erase(it);
  }
  if (r.factor % o.factor != 0) return std::nullopt;
  r.factor /= o.factor;
  return r;
}

Dim DimProduct::to_dim() const {
  if (unknown) return Dim();
  if (factor == 0) return Dim(0);
  if (symbols.empty()) return Dim(factor);
  if (symbols.size() == 1 && factor == 1) return Dim::symbolic(symbols[0]);
  return Dim();
}

DimProduct product(const Shape& s, size_t begin, size_t end) {
  DimProduct p;
  if (!s.has_rank()) {
    p.unknown = true;
    return p;
  }
  for (size_t i = begin; i < end && i < s.rank(); ++i) p.mul(s[i]);
  return p;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    return invalid_model(what + " " + std::to_string(axis) + " is out of range for rank " +
                         std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Result<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                            const std::string& what) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    XOPT_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, what));
    if (std::find(out.begin(), out.end(), n) != out.end())
      return invalid_model(what + " lists axis " + std::to_string(a) + " twice");
    out.push_back(n);
  }
  return out;
}

Status infer_same_as_input(InferenceContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is missing");
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

Status infer_same_shape_bool(InferenceContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is missing");
  ctx.set_output(0, DType::kBool, ctx.input_shape(0));
  return Status::ok();
}

Status check_arity(const InferenceContext& ctx, size_t min_inputs, size_t max_inputs) {
  size_t n = ctx.num_inputs();
  if (n > max_inputs)
    return ctx.error("has " + std::to_string(n) + " inputs, at most " + std::to_string(max_inputs) +
                     " are allowed at opset " + std::to_string(ctx.opset()));
  for (size_t i = 0; i < min_inputs; ++i)
    if (!ctx.has_input(i))
      return ctx.error("required input " + std::to_string(i) + " is missing (opset " +
                       std::to_string(ctx.opset()) + ")");
  return Status::ok();
}

Status check_same_dtype(const InferenceContext& ctx, size_t a, size_t b) {
  DType ta = ctx.input_dtype(a), tb = ctx.input_dtype(b);
  if (ta != DType::kUndefined && tb != DType::kUndefined && ta != tb)
    return ctx.error("inputs " + std::to_string(a) + " and " + std::to_string(b) +
                     " have different types (" + std::string(dtype_name(ta)) + " vs " +
                     std::string(dtype_name(tb)) + ")");
  return Status::ok();
}

}  // namespace xopt::ir::ops
