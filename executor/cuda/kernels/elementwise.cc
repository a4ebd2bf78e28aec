// Broadcast elementwise ops on the GPU: Add, Sub, Mul, Div, Mod, Pow, PRelu, comparisons, And / Or
// / Xor, variadic Max / Min / Sum / Mean, Where, Cast and CastLike. The broadcast is resolved at
// compile time into an IndexPlan (merged dims and per-operand strides) that the launch carries by
// value. Semantics follow executor/cpu/kernels/elementwise_{arith,compare,variadic,cast}.cc.
#include <cstring>

#include "executor/cpu/broadcast.h"
#include "executor/cuda/kernels/compile_util.h"
#include "executor/cuda/kernels/elementwise.cuh"

namespace xopt::cuda {
namespace {

enum TypeSet : unsigned {
  kF32 = 1u << static_cast<int>(ElemType::kFloat),
  kI32 = 1u << static_cast<int>(ElemType::kInt32),
  kI64 = 1u << static_cast<int>(ElemType::kInt64),
  kBool = 1u << static_cast<int>(ElemType::kBool),
  kF16 = 1u << static_cast<int>(ElemType::kHalf),
  kBF16 = 1u << static_cast<int>(ElemType::kBFloat16),
  kFloats = kF32 | kF16 | kBF16,  // float32, float16, bfloat16 (the half types computed in float)
};

bool in_set(ElemType t, unsigned set) {
  return (set & (1u << static_cast<int>(t))) != 0;
}

// The plan for output `y` read from `ins` with numpy broadcasting; checks that the inputs do
// broadcast to y's planned dims.
Result<IndexPlan> broadcast_plan(const CompileContext& ctx, const DeviceTensor& y,
                                 const std::vector<const DeviceTensor*>& ins) {
  std::vector<std::vector<int64_t>> shapes;
  for (const DeviceTensor* t : ins) shapes.push_back(t->dims);
  auto out = exec::broadcast_shapes(shapes);
  if (!out.is_ok()) return ctx.error(out.status().message());
  if (*out != y.dims)
    return ctx.error("inputs broadcast to " + ir::dims_string(*out) +
                     " but the output is planned as " + ir::dims_string(y.dims));
  std::vector<std::vector<int64_t>> strides;
  for (const DeviceTensor* t : ins) strides.push_back(broadcast_strides_to(t->dims, y.dims));
  IndexPlan p;
  if (!make_index_plan(y.dims, strides, &p))
    return ctx.unsupported("broadcast over more than " + std::to_string(kMaxDims) + " merged dims");
  return p;
}

// Before opset 7, B is broadcast onto A only with broadcast=1, aligned at `axis` (default:
// trailing): B's dims rewritten to A's rank for numpy broadcasting (as
// executor/cpu/kernels/elementwise.h legacy_broadcast_dims does).
Result<std::vector<int64_t>> legacy_dims(const CompileContext& ctx, const std::vector<int64_t>& a,
                                         const std::vector<int64_t>& b) {
  if (ctx.opset() >= 7) return b;
  if (ctx.node().attr_int("broadcast", 0) == 0) {
    if (a != b)
      return ctx.error("shapes " + ir::dims_string(a) + " and " + ir::dims_string(b) +
                       " differ and broadcast=0");
    return b;
  }
  if (b.size() > a.size()) return ctx.error("B has a higher rank than A");
  int64_t axis = ctx.node().attr_int("axis", static_cast<int64_t>(a.size() - b.size()));
  if (axis < 0) axis += static_cast<int64_t>(a.size());
  if (axis < 0 || axis + static_cast<int64_t>(b.size()) > static_cast<int64_t>(a.size()))
    return ctx.error("axis " + std::to_string(axis) + " does not fit B into A");
  std::vector<int64_t> out(a.size(), 1);
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] != a[static_cast<size_t>(axis) + i] && b[i] != 1)
      return ctx.error("B " + ir::dims_string(b) + " does not match A " + ir::dims_string(a) +
                       " at axis " + std::to_string(axis));
    out[static_cast<size_t>(axis) + i] = b[i];
  }
  return out;
}

Result<Launch> binary(CompileContext& ctx, BinaryOp op, unsigned types) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* a, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* b_in, need_input(ctx, 1));
  DeviceTensor b_view = *b_in;
  XOPT_ASSIGN_OR_RETURN(b_view.dims, legacy_dims(ctx, a->dims, b_in->dims));
  const DeviceTensor* b = &b_view;
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  const auto ta = elem_type(a->dtype), tb = elem_type(b->dtype);
  if (!ta || !in_set(*ta, types))
    return ctx.unsupported("element type " + type_text(a->dtype) + " is not supported on the GPU");
  if (op == BinaryOp::kPow) {
    if (!tb || !in_set(*tb, kFloats | kI32 | kI64))
      return ctx.unsupported("exponent type " + type_text(b->dtype) + " is not supported");
  } else if (a->dtype != b->dtype) {
    return ctx.error("input 1 is " + type_text(b->dtype) + " but input 0 is " +
                     type_text(a->dtype));
  }
  XOPT_ASSIGN_OR_RETURN(IndexPlan p, broadcast_plan(ctx, *y, {a, b}));
  if (p.numel == 0) return no_op_launch();
  const void* pa = a->data;
  const void* pb = b->data;
  void* py = y->data;
  const ElemType ea = *ta, eb = *tb;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_binary(op, ea, eb, pa, pb, py, p, env.stream));
  });
}

CompileFn binary_fn(BinaryOp op, unsigned types) {
  return [op, types](CompileContext& ctx) { return binary(ctx, op, types); };
}

Result<Launch> mod(CompileContext& ctx) {
  const bool fmod = ctx.node().attr_int("fmod", 0) != 0;
  return binary(ctx, fmod ? BinaryOp::kFMod : BinaryOp::kMod, kFloats | kI32 | kI64);
}

// PRelu: the slope broadcasts (unidirectionally) to X; before opset 7 a 1-D slope of C elements
// applies per channel (axis 1).
Result<Launch> prelu(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* slope, need_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  if (x->dims != y->dims) return ctx.error("output dims differ from X");
  XOPT_ASSIGN_OR_RETURN(const ElemType et, float_elem(ctx, x->dtype));
  XOPT_RETURN_IF_ERROR(same_type(ctx, x->dtype, {slope, y}));
  DeviceTensor s = *slope;
  bool ok = s.rank() <= x->rank();
  for (size_t i = 0; ok && i < s.rank(); ++i) {
    const int64_t d = s.dims[s.rank() - 1 - i], o = x->dims[x->rank() - 1 - i];
    ok = d == o || d == 1;
  }
  if (!ok) {
    if (ctx.opset() < 7 && s.rank() == 1 && x->rank() >= 2 && s.dims[0] == x->dims[1]) {
      std::vector<int64_t> d(x->rank() - 1, 1);
      d[0] = s.dims[0];
      s.dims = d;
    } else {
      return ctx.error("slope " + ir::dims_string(s.dims) + " cannot be broadcast to X " +
                       ir::dims_string(x->dims));
    }
  }
  XOPT_ASSIGN_OR_RETURN(IndexPlan p, broadcast_plan(ctx, *y, {x, &s}));
  if (p.numel == 0) return no_op_launch();
  const void* px = x->data;
  const void* ps = s.data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_binary(BinaryOp::kPRelu, et, et, px, ps, py, p, env.stream));
  });
}

Result<Launch> variadic(CompileContext& ctx, VariadicOp op) {
  std::vector<const DeviceTensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.input(i) != nullptr) ins.push_back(ctx.input(i));
  if (ins.empty()) return ctx.error("needs at least one input");
  if (ins.size() > static_cast<size_t>(kMaxOperands))
    return ctx.unsupported("more than " + std::to_string(kMaxOperands) + " inputs");
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  for (const DeviceTensor* t : ins)
    if (t->dtype != ins[0]->dtype) return ctx.error("inputs differ in element type");
  const auto t = elem_type(ins[0]->dtype);
  const unsigned types = op == VariadicOp::kMean ? kFloats : (kFloats | kI32 | kI64);
  if (!t || !in_set(*t, types))
    return ctx.unsupported("element type " + type_text(ins[0]->dtype) +
                           " is not supported on the GPU");
  XOPT_ASSIGN_OR_RETURN(IndexPlan p, broadcast_plan(ctx, *y, ins));
  if (p.numel == 0) return no_op_launch();
  VariadicArgs args;
  for (size_t i = 0; i < ins.size(); ++i) args.in[i] = ins[i]->data;
  void* py = y->data;
  const ElemType e = *t;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_variadic(op, e, args, py, p, env.stream));
  });
}

CompileFn variadic_fn(VariadicOp op) {
  return [op](CompileContext& ctx) { return variadic(ctx, op); };
}

Result<Launch> where(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* c, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 1));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* yv, need_input(ctx, 2));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* out, need_output(ctx, 0));
  if (c->dtype != ir::DType::kBool)
    return ctx.error("condition must be bool, got " + type_text(c->dtype));
  if (x->dtype != yv->dtype) return ctx.error("X and Y differ in element type");
  const size_t es = ir::dtype_size(x->dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return ctx.unsupported("element type " + type_text(x->dtype) + " is not supported on the GPU");
  XOPT_ASSIGN_OR_RETURN(IndexPlan p, broadcast_plan(ctx, *out, {c, x, yv}));
  if (p.numel == 0) return no_op_launch();
  const bool* pc = c->as<bool>();
  const void* px = x->data;
  const void* py = yv->data;
  void* po = out->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_where(pc, px, py, po, es, p, env.stream));
  });
}

Result<Launch> cast_to(CompileContext& ctx, ir::DType to) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  const auto from_t = elem_type(x->dtype), to_t = elem_type(to);
  if (!from_t || !to_t)
    return ctx.unsupported("Cast from " + type_text(x->dtype) + " to " + type_text(to) +
                           " is not supported on the GPU");
  if (y->dtype != to) return ctx.error("output is planned as " + type_text(y->dtype));
  if (x->numel() != y->numel()) return ctx.error("output has another element count");
  const int64_t n = x->numel();
  if (n == 0) return no_op_launch();
  const void* px = x->data;
  void* py = y->data;
  if (x->dtype == to) {
    const size_t bytes = x->nbytes();
    return Launch([=](const LaunchEnv& env) -> Status {
      if (px == py) return Status::ok();
      return cuda_status(cudaMemcpyAsync(py, px, bytes, cudaMemcpyDeviceToDevice, env.stream),
                         "cudaMemcpyAsync");
    });
  }
  const ElemType f = *from_t, t = *to_t;
  return Launch(
      [=](const LaunchEnv& env) { return check_launch(launch_cast(f, t, px, py, n, env.stream)); });
}

Result<Launch> cast(CompileContext& ctx) {
  const auto* to = ctx.node().attr("to");
  if (to == nullptr || !to->has_i()) return ctx.error("attribute 'to' is missing");
  return cast_to(ctx, static_cast<ir::DType>(to->i()));
}

Result<Launch> cast_like(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* like, need_input(ctx, 1));
  return cast_to(ctx, like->dtype);
}

constexpr const char* kNumeric = "float32, float16, bfloat16, int32, int64";

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Add", 6, kLastOpset, binary_fn(BinaryOp::kAdd, kFloats | kI32 | kI64),
                       kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Sub", 6, kLastOpset, binary_fn(BinaryOp::kSub, kFloats | kI32 | kI64),
                       kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Mul", 6, kLastOpset, binary_fn(BinaryOp::kMul, kFloats | kI32 | kI64),
                       kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Div", 6, kLastOpset, binary_fn(BinaryOp::kDiv, kFloats | kI32 | kI64),
                       kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Mod", 10, kLastOpset, mod, kNumeric);
XOPT_CUDA_KERNEL_TYPES(
    "", "Pow", 6, kLastOpset, binary_fn(BinaryOp::kPow, kFloats),
    "float32, float16, bfloat16 (exponent float32, float16, bfloat16, int32, int64)");
XOPT_CUDA_KERNEL_TYPES("", "PRelu", 6, kLastOpset, prelu, kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Equal", 7, kLastOpset,
                       binary_fn(BinaryOp::kEqual, kFloats | kI32 | kI64 | kBool),
                       "float32, float16, bfloat16, int32, int64, bool");
XOPT_CUDA_KERNEL_TYPES("", "Less", 7, kLastOpset, binary_fn(BinaryOp::kLess, kFloats | kI32 | kI64),
                       kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Greater", 7, kLastOpset,
                       binary_fn(BinaryOp::kGreater, kFloats | kI32 | kI64), kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "LessOrEqual", 12, kLastOpset,
                       binary_fn(BinaryOp::kLessOrEqual, kFloats | kI32 | kI64), kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "GreaterOrEqual", 12, kLastOpset,
                       binary_fn(BinaryOp::kGreaterOrEqual, kFloats | kI32 | kI64), kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "And", 7, kLastOpset, binary_fn(BinaryOp::kAnd, kBool), "bool");
XOPT_CUDA_KERNEL_TYPES("", "Or", 7, kLastOpset, binary_fn(BinaryOp::kOr, kBool), "bool");
XOPT_CUDA_KERNEL_TYPES("", "Xor", 7, kLastOpset, binary_fn(BinaryOp::kXor, kBool), "bool");
XOPT_CUDA_KERNEL_TYPES("", "Max", 6, kLastOpset, variadic_fn(VariadicOp::kMax), kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Min", 6, kLastOpset, variadic_fn(VariadicOp::kMin), kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Sum", 6, kLastOpset, variadic_fn(VariadicOp::kSum), kNumeric);
XOPT_CUDA_KERNEL_TYPES("", "Mean", 6, kLastOpset, variadic_fn(VariadicOp::kMean), kFloatTypes);
XOPT_CUDA_KERNEL_TYPES("", "Where", 9, kLastOpset, where, "any 1/2/4/8-byte type (condition bool)");
XOPT_CUDA_KERNEL_TYPES("", "Cast", 6, kLastOpset, cast,
                       "float32, float16, bfloat16, int32, int64, bool (to and from)");
XOPT_CUDA_KERNEL_TYPES("", "CastLike", 15, kLastOpset, cast_like,
                       "float32, float16, bfloat16, int32, int64, bool (to and from)");

}  // namespace xopt::cuda
