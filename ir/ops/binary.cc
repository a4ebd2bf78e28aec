// Broadcasting ops: arithmetic, comparison and logic, the variadic Max/Min/Sum/Mean, and Where.
// Integer arithmetic, Equal and Where also compute their result on propagated shape data.
#include <algorithm>
#include <functional>

#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

// Data of a broadcasting op's inputs, when every input is a scalar or 1-D tensor with known content
// and the sizes broadcast (equal, or 1).
std::optional<std::vector<const SymData*>> broadcast_data(const InferenceContext& ctx, size_t n,
                                                          size_t* out_size) {
  std::vector<const SymData*> in;
  size_t size = 1;
  for (size_t i = 0; i < n; ++i) {
    const SymData* d = ctx.input_data(i);
    if (d == nullptr || !ctx.input_shape(i).has_rank() || ctx.input_shape(i).rank() > 1)
      return std::nullopt;
    if (d->size() != 1) {
      if (size != 1 && size != d->size()) return std::nullopt;
      size = d->size();
    }
    in.push_back(d);
  }
  *out_size = size;
  return in;
}

const SymInt& at(const SymData& d, size_t i) {
  return d.size() == 1 ? d[0] : d[i];
}

SymInt add(const SymInt& a, const SymInt& b) {
  if (a.is_known() && b.is_known()) return SymInt::known(wrapping_add(*a.value, *b.value));
  if (b.is_known() && *b.value == 0) return a;
  if (a.is_known() && *a.value == 0) return b;
  return SymInt::unknown();
}
SymInt sub(const SymInt& a, const SymInt& b) {
  if (a.is_known() && b.is_known()) return SymInt::known(wrapping_sub(*a.value, *b.value));
  if (b.is_known() && *b.value == 0) return a;
  if (a.is_symbolic() && a.same_as(b)) return SymInt::known(0);
  return SymInt::unknown();
}
SymInt mul(const SymInt& a, const SymInt& b) {
  if (a.is_known() && b.is_known()) return SymInt::known(wrapping_mul(*a.value, *b.value));
  if ((a.is_known() && *a.value == 0) || (b.is_known() && *b.value == 0)) return SymInt::known(0);
  if (b.is_known() && *b.value == 1) return a;
  if (a.is_known() && *a.value == 1) return b;
  return SymInt::unknown();
}
// Integer Div truncates toward zero, as onnxruntime's kernels do.
SymInt div(const SymInt& a, const SymInt& b) {
  if (a.is_known() && b.is_known() && *b.value != 0) return SymInt::known(*a.value / *b.value);
  if (b.is_known() && *b.value == 1) return a;
  if (a.is_symbolic() && a.same_as(b)) return SymInt::known(1);
  return SymInt::unknown();
}
SymInt equal(const SymInt& a, const SymInt& b) {
  if (a.is_known() && b.is_known()) return SymInt::known(*a.value == *b.value ? 1 : 0);
  if (a.same_as(b)) return SymInt::known(1);
  return SymInt::unknown();
}

using DataOp = SymInt (*)(const SymInt&, const SymInt&);

void propagate_binary_data(InferenceContext& ctx, DType out_dtype, DataOp op) {
  if (op == nullptr || !(is_integer(out_dtype) || out_dtype == DType::kBool)) return;
  if (out_dtype != DType::kBool && !is_integer(ctx.input_dtype(0))) return;
  size_t n = 0;
  auto in = broadcast_data(ctx, 2, &n);
  if (!in) return;
  SymData out(n);
  for (size_t i = 0; i < n; ++i) out[i] = op(at(*(*in)[0], i), at(*(*in)[1], i));
  ctx.set_output_data(0, std::move(out));
}

enum class OutType { kFirstInput, kBool };

template <OutType kOut, bool kSameTypes, DataOp kData>
Status infer_broadcast(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  if (kSameTypes) XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  auto shape = broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1));
  if (!shape.is_ok()) return ctx.error(shape.status().message());
  DType t = kOut == OutType::kBool ? DType::kBool : ctx.input_dtype(0);
  ctx.set_output(0, t, std::move(shape).value());
  propagate_binary_data(ctx, t, kData);
  return Status::ok();
}

// Opsets 1-6: `broadcast` = 1 stretches B over A (aligned at `axis`); the output has A's shape.
template <OutType kOut>
Status infer_legacy_broadcast(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (ctx.node().attr_int("broadcast", 0) == 0 && a.is_static() && b.is_static() && !(a == b))
    return ctx.error("shapes " + str(a) + " and " + str(b) +
                     " differ and attribute broadcast is 0 (opset " + std::to_string(ctx.opset()) +
                     ")");
  if (a.has_rank() && b.has_rank() && b.rank() > a.rank())
    return ctx.error("B " + str(b) + " has a higher rank than A " + str(a) + " (legacy broadcast)");
  ctx.set_output(0, kOut == OutType::kBool ? DType::kBool : ctx.input_dtype(0), a);
  return Status::ok();
}

Status infer_prelu(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  // Opsets 1-6 allowed a slope of shape [C] against [N,C,...]; from 7 it broadcasts to X.
  if (ctx.opset() >= 7) {
    Status s = check_unidirectional(ctx.input_shape(0), ctx.input_shape(1));
    if (!s) return ctx.error("slope: " + s.message());
  }
  return infer_same_as_input(ctx);
}

Status infer_variadic(InferenceContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.error("needs at least one input");
  Shape shape = ctx.input_shape(0);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    if (i == 0) continue;
    auto s = broadcast_shapes(shape, ctx.input_shape(i));
    if (!s.is_ok()) return ctx.error(s.status().message());
    shape = std::move(s).value();
  }
  DType t = ctx.input_dtype(0);
  ctx.set_output(0, t, std::move(shape));
  // Max/Min of two integer shape tensors (CenterCropPad's expansion).
  const std::string& op = ctx.node().op_type();
  if (ctx.num_inputs() == 2 && is_integer(t) && (op == "Max" || op == "Min")) {
    size_t n = 0;
    if (auto in = broadcast_data(ctx, 2, &n)) {
      SymData out(n);
      for (size_t i = 0; i < n; ++i) {
        const SymInt& a = at(*(*in)[0], i);
        const SymInt& b = at(*(*in)[1], i);
        if (a.is_known() && b.is_known()) {
          out[i] = SymInt::known(op == "Max" ? std::max(*a.value, *b.value)
                                             : std::min(*a.value, *b.value));
        } else {
          out[i] = a.same_as(b) ? a : SymInt::unknown();
        }
      }
      ctx.set_output_data(0, std::move(out));
    }
  }
  return Status::ok();
}

Status infer_where(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 1, 2));
  if (ctx.input_dtype(0) != DType::kUndefined && ctx.input_dtype(0) != DType::kBool)
    return ctx.error("condition must be bool, got " + std::string(dtype_name(ctx.input_dtype(0))));
  auto s1 = broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1));
  if (!s1.is_ok()) return ctx.error(s1.status().message());
  auto s2 = broadcast_shapes(*s1, ctx.input_shape(2));
  if (!s2.is_ok()) return ctx.error(s2.status().message());
  DType t = ctx.input_dtype(1);
  ctx.set_output(0, t, std::move(s2).value());
  if (is_integer(t)) {
    size_t n = 0;
    if (auto in = broadcast_data(ctx, 3, &n)) {
      SymData out(n);
      for (size_t i = 0; i < n; ++i) {
        const SymInt& c = at(*(*in)[0], i);
        const SymInt& x = at(*(*in)[1], i);
        const SymInt& y = at(*(*in)[2], i);
        out[i] = c.is_known() ? (*c.value != 0 ? x : y) : x.same_as(y) ? x : SymInt::unknown();
      }
      ctx.set_output_data(0, std::move(out));
    }
  }
  return Status::ok();
}

void binary(OpList& ops, const char* name, int since, InferFn fn, InferFn legacy = nullptr) {
  if (legacy != nullptr) {
    ops.push_back(make_op(name, 1, 6, legacy, kPointwise));
  }
  ops.push_back(make_op(name, since, kMaxOpset, fn, kPointwise));
}

constexpr auto kFirst = OutType::kFirstInput;
constexpr auto kBool = OutType::kBool;

}  // namespace

void register_binary_ops(OpList& ops) {
  auto legacy = infer_legacy_broadcast<kFirst>;
  auto legacy_bool = infer_legacy_broadcast<kBool>;
  binary(ops, "Add", 7, infer_broadcast<kFirst, true, add>, legacy);
  binary(ops, "Sub", 7, infer_broadcast<kFirst, true, sub>, legacy);
  binary(ops, "Mul", 7, infer_broadcast<kFirst, true, mul>, legacy);
  binary(ops, "Div", 7, infer_broadcast<kFirst, true, div>, legacy);
  // Pow's exponent may have another type from opset 12; the result has the base's type.
  binary(ops, "Pow", 7, infer_broadcast<kFirst, false, nullptr>, legacy);
  binary(ops, "Mod", 10, infer_broadcast<kFirst, true, nullptr>);
  binary(ops, "BitShift", 11, infer_broadcast<kFirst, true, nullptr>);
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    binary(ops, op, 18, infer_broadcast<kFirst, true, nullptr>);
  for (const char* op : {"And", "Or", "Xor", "Greater", "Less"})
    binary(ops, op, 7, infer_broadcast<kBool, true, nullptr>, legacy_bool);
  binary(ops, "Equal", 7, infer_broadcast<kBool, true, equal>, legacy_bool);
  for (const char* op : {"GreaterOrEqual", "LessOrEqual"})
    binary(ops, op, 12, infer_broadcast<kBool, true, nullptr>);
  binary(ops, "PRelu", 1, infer_prelu);
  // Max/Min/Sum/Mean needed equal shapes before opset 8; broadcasting gives the same result then.
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) binary(ops, op, 1, infer_variadic);
  binary(ops, "Where", 9, infer_where);
}

}  // namespace xopt::ir::ops
