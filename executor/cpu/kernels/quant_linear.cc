// QuantizeLinear and DequantizeLinear (per tensor, per axis from opset 13, blocked from 21) and
// DynamicQuantizeLinear. Quantized types: int8, uint8, int16, uint16 (and int32 for
// DequantizeLinear's input); int4/uint4, int2/uint2 and the float8/float4 types are not represented
// in xopt's IR, so models using them are refused when loaded.
#include <vector>

#include "executor/cpu/kernels/quant_util.h"
#include "executor/cpu/kernels/tensor_util.h"

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
                       " elements (dim " + std::to_string(axis) + " of " + dims_str(x.dims()) +
                       "), got " + dims_str(scale.dims()));
    return m;
  }
  m.block = block;
  m.blocks = (m.dim + block - 1) / block;
  std::vector<int64_t> want = x.dims();
  want[a] = m.blocks;
  if (scale.dims() != want)
    return ctx.error("a blocked scale for " + dims_str(x.dims()) + " with block_size " +
                     std::to_string(block) + " on axis " + std::to_string(axis) + " must be " +
                     dims_str(want) + ", got " + dims_str(scale.dims()));
  return m;
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
  XOPT_ASSIGN_OR_RETURN(ScaleMap m, scale_map(ctx, x, *sp));
  const std::vector<double> scales = values_of(*sp);
  const std::vector<double> zps =
      zp != nullptr ? values_of(*zp) : std::vector<double>(scales.size());
  std::vector<float> fscales(scales.begin(), scales.end());
  return dispatch_quantized(ctx, out, [&](auto qtag) -> Status {
    using Q = typename decltype(qtag)::type;
    if constexpr (std::is_same_v<Q, int32_t>) {
      return ctx.unsupported("QuantizeLinear to int32 is not in the ONNX spec");
    } else {
      XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, x.dims()));
      Q* yd = y->mutable_data<Q>();
      if (x.dtype() == ir::DType::kInt32) {  // in double: every int32 is exact there
        const int32_t* xd = x.data<int32_t>();
        m.for_each([&](int64_t i, int64_t s) {
          yd[i] = saturate_round<Q>(round_half_even(xd[i] / scales[static_cast<size_t>(s)]) +
                                    zps[static_cast<size_t>(s)]);
        });
        return Status::ok();
      }
      return dispatch_float(x.dtype(), [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        const T* xd = x.data<T>();
        // The division in float, as the reference does for float32 inputs.
        m.for_each([&](int64_t i, int64_t s) {
          const auto v = static_cast<float>(to_compute(xd[i])) / fscales[static_cast<size_t>(s)];
          yd[i] = saturate_round<Q>(round_half_even(v) + zps[static_cast<size_t>(s)]);
        });
        return Status::ok();
      });
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
  ir::DType out = ctx.opset() >= 19 ? sp->dtype() : ir::DType::kFloat;
  const int64_t attr = ctx.opset() >= 23 ? ctx.node().attr_int("output_dtype", 0) : 0;
  if (attr != 0) out = static_cast<ir::DType>(attr);
  XOPT_ASSIGN_OR_RETURN(ScaleMap m, scale_map(ctx, x, *sp));
  const std::vector<double> scales = values_of(*sp);
  const std::vector<double> zps =
      zp != nullptr ? values_of(*zp) : std::vector<double>(scales.size());
  const std::vector<float> fscales(scales.begin(), scales.end());
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
