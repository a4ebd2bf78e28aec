// QuantizeLinear and DequantizeLinear (per tensor, per axis from opset 13, blocked from 21) and
// DynamicQuantizeLinear. Quantized types: int8, uint8, int16, uint16 (and int32 for
// DequantizeLinear's input), and the narrow types as their opsets add them (ir/narrow_float.h):
// float8 (19; `saturate`), int4/uint4 (21), float4e2m1 (23), a float8e8m0 scale (24), int2/uint2
// (25). The quotient x / scale is computed as the ONNX reference does: in `precision` (opset 23)
// when given, else in the type numpy would promote x and the scale to.
#include <vector>

#include "executor/cpu/kernels/quant_util.h"
#include "executor/cpu/kernels/tensor_util.h"
#include "ir/narrow_float.h"

namespace xopt::exec::quant {
namespace {

// Which scale element each element of x uses: x is viewed as [outer, dim, inner] around `axis`;
// per axis the scale is indexed by the middle index, blocked by (outer, middle / block, inner).
struct ScaleMap {
  bool per_tensor = true;
  int64_t outer = 1, dim = 1, inner = 1, block = 0, blocks = 1;

  // Calls f(i, s) for every element i of x, s being its scale's index.
  template <typename F>
  void for_each(F&& f) const {
    if (per_tensor) {
      for (int64_t i = 0, n = outer * dim * inner; i < n; ++i) f(i, int64_t{0});
      return;
    }
    int64_t i = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t a = 0; a < dim; ++a) {
        if (block == 0) {
          for (int64_t j = 0; j < inner; ++j) f(i++, a);
        } else {
          const int64_t base = (o * blocks + a / block) * inner;
          for (int64_t j = 0; j < inner; ++j) f(i++, base + j);
        }
      }
  }
};

// The scale layout of input 1 (and the zero point, input 2, which must match it) against x.
Result<ScaleMap> scale_map(const KernelContext& ctx, const ir::Tensor& x, const ir::Tensor& scale) {
  ScaleMap m;
  m.outer = x.numel();
  const ir::Tensor* zp = ctx.input(2);
  if (zp != nullptr && zp->numel() != scale.numel())
    return ctx.error("the zero point has " + std::to_string(zp->numel()) +
                     " elements but the scale " + std::to_string(scale.numel()));
  const int64_t block = ctx.opset() >= 21 ? ctx.node().attr_int("block_size", 0) : 0;
  if (block < 0) return ctx.error("block_size must not be negative");
  if (block == 0 && scale.numel() == 1 && scale.rank() <= 1) return m;
  if (ctx.opset() < 13) return ctx.error("the scale must be a scalar before opset 13");
  const int64_t rank = static_cast<int64_t>(x.rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 1), rank));
  const auto a = static_cast<size_t>(axis);
  m.per_tensor = false;
  m.outer = product(x.dims(), 0, a);
  m.dim = x.dims()[a];
  m.inner = product(x.dims(), a + 1, x.rank());
  if (block == 0) {
    if (scale.rank() != 1 || scale.dims()[0] != m.dim)
      return ctx.error("a per-axis scale must be 1-D with " + std::to_string(m.dim) +
                       " elements (dim " + std::to_string(axis) + " of " +
                       ir::dims_string(x.dims()) + "), got " + ir::dims_string(scale.dims()));
    return m;
  }
  m.block = block;
  m.blocks = (m.dim + block - 1) / block;
  std::vector<int64_t> want = x.dims();
  want[a] = m.blocks;
  if (scale.dims() != want)
    return ctx.error("a blocked scale for " + ir::dims_string(x.dims()) + " with block_size " +
                     std::to_string(block) + " on axis " + std::to_string(axis) + " must be " +
                     ir::dims_string(want) + ", got " + ir::dims_string(scale.dims()));
  return m;
}

// A narrow type used before the opset that introduced it is an invalid model.
Status check_opset(const KernelContext& ctx, ir::DType t) {
  const int since = ir::narrow_type_opset(t);
  if (since > ctx.opset())
    return ctx.error(std::string(ir::dtype_name(t)) + " needs opset " + std::to_string(since) +
                     " (the node has " + std::to_string(ctx.opset()) + ")");
  return Status::ok();
}

// The type x / scale is computed in: `precision`, else numpy's promotion of x's and the scale's
// types (double if either is; float16 or bfloat16 when both are; float otherwise; int32 x is
// divided in double).
ir::DType quotient_type(ir::DType x, ir::DType scale, int64_t precision) {
  if (precision != 0) return static_cast<ir::DType>(precision);
  if (x == ir::DType::kInt32 || x == ir::DType::kDouble || scale == ir::DType::kDouble)
    return ir::DType::kDouble;
  if (x == scale && (x == ir::DType::kFloat16 || x == ir::DType::kBFloat16)) return x;
  return ir::DType::kFloat;
}

// a / b rounded to type t (float, double, float16 or bfloat16). A float quotient of two halves
// rounded to half is their correctly rounded half quotient (float has more than 2 * 11 + 2 bits).
double divide_in(ir::DType t, double a, double b) {
  switch (t) {
    case ir::DType::kDouble:
      return a / b;
    case ir::DType::kFloat16: {
      const float q = ir::half_to_float(ir::float_to_half(static_cast<float>(a))) /
                      ir::half_to_float(ir::float_to_half(static_cast<float>(b)));
      return ir::half_to_float(ir::float_to_half(q));
    }
    case ir::DType::kBFloat16: {
      const float q = ir::bfloat16_to_float(ir::float_to_bfloat16(static_cast<float>(a))) /
                      ir::bfloat16_to_float(ir::float_to_bfloat16(static_cast<float>(b)));
      return ir::bfloat16_to_float(ir::float_to_bfloat16(q));
    }
    default:
      return static_cast<double>(static_cast<float>(a) / static_cast<float>(b));
  }
}

Status quantize_linear(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* xp, required_input(ctx, 0, "x"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* sp, required_input(ctx, 1, "y_scale"));
  const ir::Tensor& x = *xp;
  const ir::Tensor* zp = ctx.input(2);
  ir::DType out = ir::DType::kUInt8;
  const int64_t attr = ctx.opset() >= 21 ? ctx.node().attr_int("output_dtype", 0) : 0;
  if (zp != nullptr)
    out = zp->dtype();
  else if (attr != 0)
    out = static_cast<ir::DType>(attr);
  if (zp != nullptr && attr != 0 && attr != static_cast<int64_t>(out))
    return ctx.error("output_dtype differs from the zero point's type");
  XOPT_RETURN_IF_ERROR(check_opset(ctx, out));
  XOPT_RETURN_IF_ERROR(check_opset(ctx, sp->dtype()));
  const bool saturate = ctx.opset() < 19 || ctx.node().attr_int("saturate", 1) != 0;
  const int64_t precision = ctx.opset() >= 23 ? ctx.node().attr_int("precision", 0) : 0;
  if (precision != 0 && !ir::is_float(static_cast<ir::DType>(precision)))
    return ctx.error("precision " + std::to_string(precision) + " is not a float type");
  if (x.dtype() == ir::DType::kInt32 && precision != 0)
    return ctx.error("precision applies to a float x only");
  XOPT_ASSIGN_OR_RETURN(ScaleMap m, scale_map(ctx, x, *sp));
  const std::vector<double> scales = values_of(*sp);
  const std::vector<double> zps =
      zp != nullptr ? values_of(*zp) : std::vector<double>(scales.size());
  // The quotients first (x is read before the output, which may share its bytes), then the store.
  const ir::DType qt = quotient_type(x.dtype(), sp->dtype(), precision);
  std::vector<double> q(static_cast<size_t>(x.numel()));
  XOPT_RETURN_IF_ERROR(dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      if (!std::is_same_v<T, int32_t>)
        return ctx.error("x must be a float type or int32, got " +
                         std::string(ir::dtype_name(x.dtype())));
    }
    const T* xd = x.data<T>();
    m.for_each([&](int64_t i, int64_t s) {
      q[static_cast<size_t>(i)] =
          divide_in(qt, static_cast<double>(to_compute(xd[i])), scales[static_cast<size_t>(s)]);
    });
    return Status::ok();
  }));
  if (ir::narrow_type_opset(out) != 0) {
    if (out == ir::DType::kFloat8E8M0)
      return ctx.error("float8e8m0 is a scale type, not a quantized type");
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, x.dims()));
    auto* yb = static_cast<uint8_t*>(y->mutable_raw_data());
    if (ir::is_narrow_int(out)) {
      const auto lo = static_cast<double>(ir::narrow_int_min(out));
      const auto hi = static_cast<double>(ir::narrow_int_max(out));
      m.for_each([&](int64_t i, int64_t s) {
        const double r = round_half_even(q[static_cast<size_t>(i)]) + zps[static_cast<size_t>(s)];
        const double c = !(r >= lo) ? lo : r > hi ? hi : r;  // NaN gives the minimum
        yb[i] = ir::wrap_narrow_int(out, static_cast<int64_t>(c));
      });
    } else {
      // float8: the zero point is zero by definition and ignored; float4e2m1 adds it (the
      // reference does) and always saturates (it has no infinity or NaN).
      const bool add_zp = out == ir::DType::kFloat4E2M1;
      m.for_each([&](int64_t i, int64_t s) {
        double v = q[static_cast<size_t>(i)];
        if (add_zp) v = static_cast<float>(v + zps[static_cast<size_t>(s)]);
        yb[i] = ir::float_to_narrow_float(out, v, saturate);
      });
    }
    return Status::ok();
  }
  return dispatch_quantized(ctx, out, [&](auto qtag) -> Status {
    using Q = typename decltype(qtag)::type;
    if constexpr (std::is_same_v<Q, int32_t>) {
      return ctx.unsupported("QuantizeLinear to int32 is not in the ONNX spec");
    } else {
      XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, x.dims()));
      Q* yd = y->mutable_data<Q>();
      m.for_each([&](int64_t i, int64_t s) {
        yd[i] = saturate_round<Q>(round_half_even(q[static_cast<size_t>(i)]) +
                                  zps[static_cast<size_t>(s)]);
      });
      return Status::ok();
    }
  });
}

Status dequantize_linear(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* xp, required_input(ctx, 0, "x"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* sp, required_input(ctx, 1, "x_scale"));
  const ir::Tensor& x = *xp;
  const ir::Tensor* zp = ctx.input(2);
  if (zp != nullptr && zp->dtype() != x.dtype())
    return ctx.error("the zero point's type differs from x's");
  XOPT_RETURN_IF_ERROR(check_opset(ctx, x.dtype()));
  XOPT_RETURN_IF_ERROR(check_opset(ctx, sp->dtype()));
  if (x.dtype() == ir::DType::kFloat8E8M0)
    return ctx.error("float8e8m0 is a scale type, not a quantized type");
  ir::DType out = ctx.opset() >= 19 ? sp->dtype() : ir::DType::kFloat;
  const int64_t attr = ctx.opset() >= 23 ? ctx.node().attr_int("output_dtype", 0) : 0;
  if (attr != 0) out = static_cast<ir::DType>(attr);
  if (!ir::is_float(out))
    return ctx.error("the output type must be float, double, float16 or bfloat16, got " +
                     std::string(ir::dtype_name(out)) +
                     (attr == 0 ? " (the scale's type; set output_dtype)" : ""));
  XOPT_ASSIGN_OR_RETURN(ScaleMap m, scale_map(ctx, x, *sp));
  const std::vector<double> scales = values_of(*sp);
  const std::vector<double> zps =
      zp != nullptr ? values_of(*zp) : std::vector<double>(scales.size());
  const std::vector<float> fscales(scales.begin(), scales.end());
  if (ir::narrow_type_opset(x.dtype()) != 0) {
    // Narrow x: float8 and float4e2m1 values are used as they are (their zero point is zero by
    // definition and ignored, as the reference does); int4/uint4/int2/uint2 subtract theirs.
    const ir::DType xt = x.dtype();
    std::vector<float> d(static_cast<size_t>(x.numel()));
    const auto* xb = static_cast<const uint8_t*>(x.raw_data());
    m.for_each([&](int64_t i, int64_t s) {
      d[static_cast<size_t>(i)] =
          ir::is_narrow_float(xt)
              ? ir::narrow_float_to_float(xt, xb[i])
              : static_cast<float>(static_cast<double>(ir::narrow_int_value(xt, xb[i])) -
                                   zps[static_cast<size_t>(s)]);
    });
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, x.dims()));
    return dispatch_float(out, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* yd = y->mutable_data<T>();
      m.for_each([&](int64_t i, int64_t s) {
        yd[i] = from_compute<T>(d[static_cast<size_t>(i)] * fscales[static_cast<size_t>(s)]);
      });
      return Status::ok();
    });
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, x.dims()));
  return dispatch_quantized(ctx, x.dtype(), [&](auto qtag) -> Status {
    using Q = typename decltype(qtag)::type;
    const Q* xd = x.data<Q>();
    return dispatch_float(out, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* yd = y->mutable_data<T>();
      // (x - zero_point) * scale in float; x - zero_point is exact for the 8- and 16-bit types.
      m.for_each([&](int64_t i, int64_t s) {
        const auto d = static_cast<float>(static_cast<double>(xd[i]) - zps[static_cast<size_t>(s)]);
        yd[i] = from_compute<T>(d * fscales[static_cast<size_t>(s)]);
      });
      return Status::ok();
    });
  });
}

Status dynamic_quantize_linear(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* xp, required_input(ctx, 0, "x"));
  if (xp->dtype() != ir::DType::kFloat)
    return ctx.error("x must be float, got " + std::string(ir::dtype_name(xp->dtype())));
  const float* xd = xp->data<float>();
  const DynamicParams p = dynamic_uint8_params(xd, xp->numel());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kUInt8, xp->dims()));
  quantize_uint8(xd, xp->numel(), p, y->mutable_data<uint8_t>());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * scale, ctx.output_uninit(1, ir::DType::kFloat, {}));
  scale->mutable_data<float>()[0] = p.scale;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * zero_point, ctx.output_uninit(2, ir::DType::kUInt8, {}));
  zero_point->mutable_data<uint8_t>()[0] = p.zero_point;
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "QuantizeLinear", 10, kLatestOpset, quantize_linear);
XOPT_CPU_KERNEL("", "DequantizeLinear", 10, kLatestOpset, dequantize_linear);
XOPT_CPU_KERNEL("", "DynamicQuantizeLinear", 11, kLatestOpset, dynamic_quantize_linear);

}  // namespace xopt::exec::quant
