// Ops that create tensors: Constant, ConstantOfShape, Range.
#include <cmath>

#include "ir/ops/op_helpers.h"
#include "ir/tensor_proto.h"

namespace xopt::ir::ops {
namespace {

// Constants up to this many elements are decoded so later nodes can read their values.
constexpr int64_t kMaxDecodedConstant = 1 << 16;

void set_data_from(InferenceContext& ctx, const Tensor& t) {
  if (!(is_integer(t.dtype()) || t.dtype() == DType::kBool) || t.numel() > kMaxDataElements) return;
  SymData d;
  for (int64_t i = 0; i < t.numel(); ++i) d.push_back(SymInt::known(t.as_int64(i)));
  ctx.set_output_data(0, std::move(d));
}

Status infer_constant(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 0, 0));
  const Node& n = ctx.node();
  int count = 0;
  for (const char* a : {"value", "sparse_value", "value_float", "value_floats", "value_int",
                        "value_ints", "value_string", "value_strings"})
    count += n.has_attr(a) ? 1 : 0;
  if (count != 1)
    return ctx.error("needs exactly one of the value attributes, has " + std::to_string(count));
  Tensor t;
  if (const auto* a = n.attr("value")) {
    const onnx::TensorProto& tp = a->t();
    DType dt = static_cast<DType>(tp.data_type());
    if (!is_valid_dtype_code(tp.data_type()))
      return unsupported(n.describe() + ": tensor element type " + std::to_string(tp.data_type()) +
                         " is not supported");
    std::vector<int64_t> dims(tp.dims().begin(), tp.dims().end());
    ctx.set_output(0, dt, Shape::of(dims));
    if (numel(dims) > kMaxDecodedConstant || tp.data_location() == onnx::TensorProto::EXTERNAL)
      return Status::ok();
    auto decoded = tensor_from_proto(tp, "");
    if (!decoded.is_ok()) return ctx.error("value: " + decoded.status().message());
    t = std::move(decoded).value();
  } else if (const auto* s = n.attr("sparse_value")) {
    const auto& sp = s->sparse_tensor();
    ctx.set_output(0, static_cast<DType>(sp.values().data_type()),
                   Shape::of({sp.dims().begin(), sp.dims().end()}));
    return Status::ok();
  } else if (n.has_attr("value_float")) {
    t = Tensor::scalar<float>(n.attr_float("value_float", 0));
  } else if (n.has_attr("value_floats")) {
    auto v = n.attr_floats("value_floats");
    t = Tensor::of<float>({static_cast<int64_t>(v.size())}, v);
  } else if (n.has_attr("value_int")) {
    t = Tensor::scalar<int64_t>(n.attr_int("value_int", 0));
  } else if (n.has_attr("value_ints")) {
    auto v = n.attr_ints("value_ints");
    t = Tensor::of<int64_t>({static_cast<int64_t>(v.size())}, v);
  } else if (n.has_attr("value_string")) {
    t = Tensor::of_strings({}, {n.attr_string("value_string", "")});
  } else {
    const auto* a = n.attr("value_strings");
    std::vector<std::string> v(a->strings().begin(), a->strings().end());
    t = Tensor::of_strings({static_cast<int64_t>(v.size())}, v);
  }
  ctx.set_output(0, t.dtype(), t.shape());
  set_data_from(ctx, t);
  ctx.set_output_constant(0, std::move(t));
  return Status::ok();
}

Status infer_constant_of_shape(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  Tensor value = ctx.node().attr_tensor("value");
  DType t = DType::kFloat;
  if (ctx.node().has_attr("value")) {
    if (value.empty()) return ctx.error("attribute value cannot be decoded");
    if (value.numel() != 1) return ctx.error("attribute value must hold one element");
    t = value.dtype();
  }
  const Shape& in = ctx.input_shape(0);
  if (in.has_rank() && in.rank() != 1) return ctx.error("input must be 1-D, got " + str(in));
  const SymData* d = ctx.input_data(0);
  if (d == nullptr) {
    if (in.is_static()) {
      XOPT_ASSIGN_OR_RETURN(size_t rank, rank_of_shape_input(ctx, in[0]));
      ctx.set_output(0, t, Shape(std::vector<Dim>(rank)));
    } else {
      ctx.set_output(0, t, Shape());
    }
    return Status::ok();
  }
  std::vector<Dim> dims;
  for (const SymInt& e : *d) {
    if (e.is_known() && *e.value < 0)
      return ctx.error("shape has negative value " + std::to_string(*e.value));
    dims.push_back(e.to_dim());
  }
  Shape shape(std::move(dims));
  if ((is_integer(t) || t == DType::kBool) && shape.is_static() && shape.rank() <= 1 &&
      *shape.numel() <= kMaxDataElements) {
    int64_t v = value.empty() ? 0 : value.as_int64(0);
    ctx.set_output_data(0, SymData(static_cast<size_t>(*shape.numel()), SymInt::known(v)));
  }
  ctx.set_output(0, t, std::move(shape));
  return Status::ok();
}

// Number of Range elements computed in the element type, as the kernels do.
template <typename T>
int64_t range_count(double start, double limit, double delta) {
  T s = static_cast<T>(start), l = static_cast<T>(limit), d = static_cast<T>(delta);
  double n = std::ceil(static_cast<double>(static_cast<T>((l - s) / d)));
  if constexpr (std::is_integral_v<T>) {
    // Integer division truncates; ceil it exactly.
    T diff = l - s;
    T q = diff / d;
    if ((diff % d != 0) && ((diff > 0) == (d > 0))) ++q;
    n = static_cast<double>(q);
  }
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

Status infer_range(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  DType t = ctx.input_dtype(0);
  for (size_t i = 0; i < 3; ++i) {
    const Shape& s = ctx.input_shape(i);
    if (s.has_rank() && !(s.rank() == 0 || (s.rank() == 1 && s[0].is_known() && s[0].value == 1)))
      return ctx.error("input " + std::to_string(i) + " must be a scalar, got " + str(s));
    if (i > 0) XOPT_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
  }
  auto start = ctx.input_doubles(0), limit = ctx.input_doubles(1), delta = ctx.input_doubles(2);
  if (start && limit && delta && !start->empty() && !limit->empty() && !delta->empty()) {
    double s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
    if (d == 0) return ctx.error("delta is 0");
    int64_t n = 0;
    switch (t) {
      case DType::kFloat:
        n = range_count<float>(s, l, d);
        break;
      case DType::kInt16:
        n = range_count<int16_t>(s, l, d);
        break;
      case DType::kInt32:
        n = range_count<int32_t>(s, l, d);
        break;
      case DType::kInt64: {
        // Exact in int64 (doubles lose precision past 2^53); the values are shape data.
        int64_t si = ctx.input_ints(0)->at(0), li = ctx.input_ints(1)->at(0);
        int64_t di = ctx.input_ints(2)->at(0);
        int64_t diff = li - si, q = diff / di;
        if (diff % di != 0 && ((diff > 0) == (di > 0))) ++q;
        n = std::max<int64_t>(q, 0);
        if (n <= kMaxDataElements) {
          SymData data;
          for (int64_t i = 0; i < n; ++i) data.push_back(SymInt::known(si + i * di));
          ctx.set_output_data(0, std::move(data));
        }
        break;
      }
      default:
        n = range_count<double>(s, l, d);
        break;
    }
    ctx.set_output(0, t, Shape::of({n}));
    return Status::ok();
  }
  // Range(0, n, 1) has n elements even when n is a symbol.
  const SymData* sd = ctx.input_data(0);
  const SymData* ld = ctx.input_data(1);
  const SymData* dd = ctx.input_data(2);
  if (sd && ld && dd && sd->size() == 1 && ld->size() == 1 && dd->size() == 1 &&
      (*sd)[0].is_known() && *(*sd)[0].value == 0 && (*dd)[0].is_known() && *(*dd)[0].value == 1 &&
      (*ld)[0].is_symbolic()) {
    ctx.set_output(0, t, Shape({(*ld)[0].to_dim()}));
    return Status::ok();
  }
  ctx.set_output(0, t, Shape({Dim()}));
  return Status::ok();
}

}  // namespace

void register_constant_ops(OpList& ops) {
  ops.push_back(make_op("Constant", 1, kMaxOpset, infer_constant));
  ops.push_back(make_op("ConstantOfShape", 9, kMaxOpset, infer_constant_of_shape));
  ops.push_back(make_op("Range", 11, kMaxOpset, infer_range));
}

}  // namespace xopt::ir::ops
