// Pad and Trilu on the GPU. Pads, axes, the constant value and Trilu's k must be constants (read
// at compile time). Semantics follow executor/cpu/kernels/tensor_pad.cc and tensor_trilu.cc.
#include <cstring>

#include "executor/cuda/kernels/compile_util.h"
#include "executor/cuda/kernels/pad.cuh"

namespace xopt::cuda {
namespace {

constexpr const char* kTypes =
    "any 1/2/4/8-byte type (float32, float16, bfloat16, int32, int64, bool, ...)";

Result<size_t> element_size(const CompileContext& ctx, ir::DType t) {
  const size_t es = ir::dtype_size(t);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return ctx.unsupported("element type " + type_text(t) + " is not supported on the GPU");
  return es;
}

// The pad value's bits in the data's type (*device set instead when it is computed at run time).
Result<uint64_t> pad_value(const CompileContext& ctx, ir::DType t, size_t es, const void** device) {
  uint64_t bits = 0;
  if (ctx.opset() < 11) {
    const float v = ctx.node().attr_float("value", 0.0f);
    switch (t) {
      case ir::DType::kFloat:
        std::memcpy(&bits, &v, 4);
        return bits;
      case ir::DType::kInt32: {
        const auto i = static_cast<int32_t>(v);
        std::memcpy(&bits, &i, 4);
        return bits;
      }
      case ir::DType::kInt64: {
        const auto i = static_cast<int64_t>(v);
        std::memcpy(&bits, &i, 8);
        return bits;
      }
      case ir::DType::kBool:
        return uint64_t{v != 0.0f ? 1u : 0u};
      case ir::DType::kFloat16:
        return uint64_t{ir::float_to_half(v)};
      case ir::DType::kBFloat16:
        return uint64_t{ir::float_to_bfloat16(v)};
      default:
        if (v == 0.0f) return 0;
        return ctx.unsupported("a non-zero pad value for " + type_text(t));
    }
  }
  if (ctx.input(2) == nullptr) return bits;
  const ir::Tensor* c = ctx.constant(2);
  if (c == nullptr) {
    const DeviceTensor* v = ctx.input(2);
    if (v->numel() == 0) return bits;
    if (v->dtype != t) return ctx.error("constant_value has another type than the data");
    *device = v->data;
    return bits;
  }
  if (c->numel() == 0) return bits;
  if (c->dtype() != t) return ctx.error("constant_value has another type than the data");
  std::memcpy(&bits, c->raw_data(), es);
  return bits;
}

Result<Launch> pad(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(size_t es, element_size(ctx, x->dtype));
  const auto rank = static_cast<int64_t>(x->rank());
  if (rank > kMaxDims) return ctx.unsupported("rank above " + std::to_string(kMaxDims));
  std::vector<int64_t> pads, axes;
  if (ctx.opset() < 11) {
    pads = ctx.node().attr_ints("pads");
  } else {
    XOPT_ASSIGN_OR_RETURN(pads, const_ints(ctx, 1, "pads"));
  }
  if (ctx.opset() >= 18 && ctx.input(3) != nullptr) {
    XOPT_ASSIGN_OR_RETURN(axes, const_ints(ctx, 3, "axes"));
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) return ctx.error("pads should have 2 entries per axis");
  const std::string mode_name = ctx.node().attr_string("mode", "constant");
  PadPlan p;
  if (mode_name == "constant")
    p.mode = PadMode::kConstant;
  else if (mode_name == "reflect")
    p.mode = PadMode::kReflect;
  else if (mode_name == "edge")
    p.mode = PadMode::kEdge;
  else if (mode_name == "wrap" && ctx.opset() >= 19)
    p.mode = PadMode::kWrap;
  else
    return ctx.error("mode '" + mode_name + "' is not defined at opset " +
                     std::to_string(ctx.opset()));
  std::vector<int64_t> begin(x->rank(), 0), end(x->rank(), 0);
  std::vector<bool> seen(x->rank(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    XOPT_ASSIGN_OR_RETURN(int64_t a, fix_axis(ctx, axes[i], rank, "axes entry"));
    if (seen[static_cast<size_t>(a)]) return ctx.error("axes repeat an axis");
    seen[static_cast<size_t>(a)] = true;
    begin[static_cast<size_t>(a)] = pads[i];
    end[static_cast<size_t>(a)] = pads[i + axes.size()];
  }
  const auto st = contiguous_strides(x->dims);
  std::vector<int64_t> out;
  p.rank = static_cast<int>(rank);
  for (size_t d = 0; d < x->rank(); ++d) {
    const int64_t crop_lo = begin[d] < 0 ? -begin[d] : 0, crop_hi = end[d] < 0 ? -end[d] : 0;
    const int64_t m = x->dims[d] - crop_lo - crop_hi;
    const int64_t pb = begin[d] > 0 ? begin[d] : 0, pe = end[d] > 0 ? end[d] : 0;
    if (m < 0) return ctx.error("pads crop more than the dim");
    if (m == 0 && (pb > 0 || pe > 0) && p.mode != PadMode::kConstant)
      return ctx.error("cannot pad an empty axis in a non-constant mode");
    out.push_back(m + pb + pe);
    p.out_dims[d] = m + pb + pe;
    p.in_strides[d] = st[d];
    p.length[d] = m;
    p.pad_begin[d] = pb;
    p.crop_begin[d] = crop_lo;
  }
  if (out != y->dims || y->dtype != x->dtype)
    return ctx.error("output dims " + ir::dims_string(y->dims) + " expected " +
                     ir::dims_string(out));
  XOPT_ASSIGN_OR_RETURN(p.value_bits, pad_value(ctx, x->dtype, es, &p.value_ptr));
  p.numel = y->numel();
  if (p.numel == 0) return no_op_launch();
  const void* px = x->data;
  void* py = y->data;
  if (px == py) {
    // The plan aliased output and input: only an identity Pad can run in place.
    bool identity = true;
    for (size_t d = 0; d < x->rank(); ++d)
      identity = identity && p.pad_begin[d] == 0 && p.crop_begin[d] == 0 &&
                 p.length[d] == x->dims[d] && p.out_dims[d] == x->dims[d];
    if (identity) return no_op_launch();
    return ctx.error("Pad cannot run in place");
  }
  return Launch(
      [=](const LaunchEnv& env) { return check_launch(launch_pad(px, py, es, p, env.stream)); });
}

Result<Launch> trilu(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(size_t es, element_size(ctx, x->dtype));
  if (x->rank() < 2) return ctx.error("input must have rank >= 2");
  if (y->dims != x->dims || y->dtype != x->dtype) return ctx.error("output differs from input");
  int64_t k = 0;
  if (ctx.input(1) != nullptr) {
    XOPT_ASSIGN_OR_RETURN(auto kv, const_ints(ctx, 1, "k"));
    if (kv.size() != 1) return ctx.error("k must be a scalar");
    k = kv[0];
  }
  const bool upper = ctx.node().attr_int("upper", 1) != 0;
  const int64_t rows = x->dims[x->rank() - 2], cols = x->dims[x->rank() - 1];
  const int64_t batch = dims_product(x->dims, 0, x->rank() - 2);
  if (x->numel() == 0) return no_op_launch();
  const void* px = x->data;
  void* py = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_trilu(px, py, es, batch, rows, cols, k, upper, env.stream));
  });
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Pad", 2, kLastOpset, pad, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "Trilu", 14, kLastOpset, trilu, kTypes);

}  // namespace xopt::cuda
