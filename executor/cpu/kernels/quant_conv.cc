// Integer convolutions: ConvInteger and QLinearConv. The zero-point-shifted input and weights go
// through the float Conv kernel in double (exact for 8-bit operands, see quant_util.h), so every
// Conv attribute (groups, dilations, pads, auto_pad, any spatial rank) means what it means there.
#include <vector>

#include "executor/cpu/kernels/nn_conv.h"
#include "executor/cpu/kernels/quant_util.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec::quant {
namespace {

// W ([M, C/group, k...]) minus its zero point: a scalar, or one value per output channel M.
Result<ir::Tensor> shifted_weights(const KernelContext& ctx, const ir::Tensor& w,
                                   const ir::Tensor* zp) {
  if (zp == nullptr || zp->numel() == 1) return shifted_double(ctx, w, zp, false, "W");
  if (w.rank() < 1 || zp->numel() != w.dims()[0])
    return ctx.error(
        "the weights' zero point must be a scalar or have one value per output "
        "channel, got " +
        ir::dims_string(zp->dims()) + " for W " + ir::dims_string(w.dims()));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor out, shifted_double(ctx, w, nullptr, false, "W"));
  const int64_t per = w.numel() / std::max<int64_t>(1, w.dims()[0]);
  double* o = out.mutable_data<double>();
  for (int64_t m = 0; m < w.dims()[0]; ++m) {
    const double z = zp->as_double(m);
    for (int64_t i = 0; i < per; ++i) o[m * per + i] -= z;
  }
  return out;
}

// conv(x - x_zero_point, w - w_zero_point) + bias in double, with the node's Conv attributes.
Result<ir::Tensor> integer_conv(const KernelContext& ctx, const ir::Tensor& x,
                                const ir::Tensor* x_zp, const ir::Tensor& w, const ir::Tensor* w_zp,
                                const ir::Tensor* bias) {
  if (x_zp != nullptr && x_zp->numel() != 1)
    return ctx.unsupported("a per-channel zero point for x (onnxruntime takes a scalar)");
  XOPT_ASSIGN_OR_RETURN(ir::Tensor xd, shifted_double(ctx, x, x_zp, false, "x"));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor wd, shifted_weights(ctx, w, w_zp));
  ir::Tensor bd;
  std::vector<const ir::Tensor*> inputs = {&xd, &wd};
  if (bias != nullptr) {
    XOPT_ASSIGN_OR_RETURN(bd, shifted_double(ctx, *bias, nullptr, false, "B"));
    inputs.push_back(&bd);
  }
  std::vector<ir::Tensor> outs;
  KernelContext inner(ctx.node(), std::move(inputs), &outs, nullptr);
  XOPT_RETURN_IF_ERROR(nn::run_conv(inner, nn::Activation{}, nullptr));
  return std::move(outs[0]);
}

// x, w, x_zero_point, w_zero_point -> int32.
Status conv_integer(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "x"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* w, required_input(ctx, 1, "w"));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor acc,
                        integer_conv(ctx, *x, ctx.input(2), *w, ctx.input(3), nullptr));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kInt32, acc.dims()));
  const double* ad = acc.data<double>();
  int32_t* yd = y->mutable_data<int32_t>();
  for (int64_t i = 0; i < acc.numel(); ++i) yd[i] = static_cast<int32_t>(ad[i]);
  return Status::ok();
}

// x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (int32):
// y = saturate(round((conv + B) * (x_scale * w_scale[m] / y_scale)) + y_zero_point), the
// multiplier in float as the reference and onnxruntime compute it, and for 8-bit outputs the
// product too (onnxruntime's MlasRequantizeOutput; rounding it in double instead moved 6 of
// 18432 values of a PP-OCR convolution by one step).
Status qlinear_conv(KernelContext& ctx) {
  for (size_t i : {0, 1, 3, 4, 6})
    if (ctx.input(i) == nullptr)
      return ctx.error("required input " + std::to_string(i) + " is missing");
  const ir::Tensor &x = *ctx.input(0), &w = *ctx.input(3);
  const ir::Tensor &x_scale = *ctx.input(1), &w_scale = *ctx.input(4), &y_scale = *ctx.input(6);
  const ir::Tensor* y_zp = ctx.input(7);
  if (x_scale.numel() != 1 || y_scale.numel() != 1 || (y_zp != nullptr && y_zp->numel() != 1))
    return ctx.error("x_scale, y_scale and y_zero_point must be scalars");
  const int64_t m_out = w.rank() > 0 ? w.dims()[0] : 0;
  if (w_scale.numel() != 1 && w_scale.numel() != m_out)
    return ctx.error("w_scale must be a scalar or have one value per output channel (" +
                     std::to_string(m_out) + "), got " + ir::dims_string(w_scale.dims()));
  const ir::Tensor* bias = ctx.input(8);
  if (bias != nullptr && bias->dtype() != ir::DType::kInt32)
    return ctx.error("B must be int32, got " + std::string(ir::dtype_name(bias->dtype())));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor acc, integer_conv(ctx, x, ctx.input(2), w, ctx.input(5), bias));
  const ir::DType out = y_zp != nullptr ? y_zp->dtype() : x.dtype();
  const double yz = y_zp != nullptr ? y_zp->as_double(0) : 0.0;
  const auto xs = static_cast<float>(x_scale.as_double(0));
  const auto ys = static_cast<float>(y_scale.as_double(0));
  const std::vector<double> ws = values_of(w_scale);
  std::vector<float> mult(static_cast<size_t>(std::max<int64_t>(m_out, 1)));
  for (size_t m = 0; m < mult.size(); ++m)
    mult[m] = xs * static_cast<float>(ws.size() == 1 ? ws[0] : ws[m]) / ys;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, acc.dims()));
  const int64_t spatial = acc.rank() > 2 ? product(acc.dims(), 2, acc.rank()) : 1;
  const double* ad = acc.data<double>();
  return dispatch_quantized(ctx, out, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q* yd = y->mutable_data<Q>();
    for (int64_t i = 0; i < acc.numel(); ++i) {
      const auto m = static_cast<size_t>((i / spatial) % std::max<int64_t>(m_out, 1));
      if constexpr (sizeof(Q) == 1) {
        // onnxruntime's MlasRequantizeOutput: float(acc) * multiplier in float, acc in int32
        // (wrapping, as its accumulator does).
        yd[i] = mlas_requantize<Q>(static_cast<int32_t>(static_cast<int64_t>(ad[i])), mult[m],
                                   static_cast<int32_t>(yz));
      } else {
        yd[i] = saturate_round<Q>(round_half_even(ad[i] * mult[m]) + yz);
      }
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "ConvInteger", 10, kLatestOpset, conv_integer);
XOPT_CPU_KERNEL("", "QLinearConv", 10, kLatestOpset, qlinear_conv);

}  // namespace xopt::exec::quant
