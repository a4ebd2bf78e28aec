// Helpers shared by the quantized kernels (quant_*.cc) and DynamicQuantizeLSTM (nn_rnn.cc):
// rounding and saturation, the dynamic uint8 quantization of onnxruntime (DynamicQuantizeLinear's
// rule), zero-point shifting, and exact integer matrix products.
//
// Integer products run as double GEMMs: every product of two 8- or 16-bit values and every sum of
// fewer than 2^21 of them is exact in a double, so the result equals int32 accumulation while BLAS
// does the work.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/dispatch.h"
#include "executor/cpu/kernel.h"
#include "ir/tensor.h"

namespace xopt::exec::quant {

// The newest opset these kernels have been checked against (ONNX 1.23's schemas).
inline constexpr int kLatestOpset = 28;

// Round half to even (the default floating-point rounding mode), as ONNX and onnxruntime do.
inline double round_half_even(double v) {
  return std::nearbyint(v);
}

// Calls f(TypeTag<Q>) for a quantized integer type: int8, uint8, int16, uint16, int32.
template <typename F>
Status dispatch_quantized(const KernelContext& ctx, ir::DType t, F&& f) {
  switch (t) {
    case ir::DType::kInt8:
      return f(TypeTag<int8_t>{});
    case ir::DType::kUInt8:
      return f(TypeTag<uint8_t>{});
    case ir::DType::kInt16:
      return f(TypeTag<int16_t>{});
    case ir::DType::kUInt16:
      return f(TypeTag<uint16_t>{});
    case ir::DType::kInt32:
      return f(TypeTag<int32_t>{});
    default:
      return ctx.unsupported("quantized type " + std::string(ir::dtype_name(t)) +
                             " (int8, uint8, int16, uint16 and int32 only; QuantizeLinear and "
                             "DequantizeLinear also take int4, uint4, int2, uint2 and the "
                             "float8/float4 types)");
  }
}

// v rounded half to even and clamped to Q's range.
template <typename Q>
Q saturate_round(double v) {
  const double r = round_half_even(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<Q>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<Q>::max());
  if (!(r >= lo)) return std::numeric_limits<Q>::min();  // NaN too
  if (r > hi) return std::numeric_limits<Q>::max();
  return static_cast<Q>(r);
}

// Scale and zero point of onnxruntime's dynamic uint8 quantization (DynamicQuantizeLinear, and the
// activations of DynamicQuantizeMatMul and DynamicQuantizeLSTM): the range [min(x, 0), max(x, 0)]
// onto [0, 255]. An all-zero input gets scale 1 (onnxruntime's GetQuantizationParameter) instead
// of dividing by zero.
struct DynamicParams {
  float scale = 1.0f;
  uint8_t zero_point = 0;
};
inline DynamicParams dynamic_uint8_params(const float* x, int64_t n) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  DynamicParams p;
  p.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zp = 0.0f - lo / p.scale;
  p.zero_point = static_cast<uint8_t>(round_half_even(std::clamp(zp, 0.0f, 255.0f)));
  return p;
}

// y = saturate(round(x / scale) + zero_point) into uint8, the division in float.
inline void quantize_uint8(const float* x, int64_t n, const DynamicParams& p, uint8_t* y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = saturate_round<uint8_t>(static_cast<double>(std::nearbyint(x[i] / p.scale)) +
                                   static_cast<double>(p.zero_point));
}

// The elements of an integer tensor `q` minus its zero point `zp` (broadcast numpy-style against
// q; with `per_row` a 1-D zp of more than one element holds one value per row, i.e. per index of
// q's second-to-last dim), as doubles. zp may be null.
inline Result<ir::Tensor> shifted_double(const KernelContext& ctx, const ir::Tensor& q,
                                         const ir::Tensor* zp, bool per_row, const char* what) {
  ir::Tensor out(ir::DType::kDouble, q.dims());
  double* o = out.mutable_data<double>();
  const int64_t n = q.numel();
  XOPT_RETURN_IF_ERROR(dispatch_numeric(q.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const T* p = q.data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<double>(p[i]);
      return Status::ok();
    } else {
      return ctx.error(std::string(what) + " must be an integer tensor, got " +
                       std::string(ir::dtype_name(q.dtype())));
    }
  }));
  if (zp == nullptr) return out;
  std::vector<int64_t> zd = zp->dims();
  if (per_row && zd.size() == 1 && zd[0] > 1 && q.rank() >= 2) zd.push_back(1);
  auto dims = broadcast_shapes({q.dims(), zd});
  if (!dims.is_ok() || *dims != q.dims())
    return ctx.error(std::string(what) + "'s zero point " + ir::dims_string(zp->dims()) +
                     " does not broadcast to " + ir::dims_string(q.dims()));
  if (zp->numel() == 1) {
    const double z = zp->as_double(0);
    for (int64_t i = 0; i < n; ++i) o[i] -= z;
    return out;
  }
  std::vector<double> zv(static_cast<size_t>(zp->numel()));
  for (int64_t i = 0; i < zp->numel(); ++i) zv[static_cast<size_t>(i)] = zp->as_double(i);
  for_each_broadcast(q.dims(), {zd}, [&](int64_t i, const int64_t* off) {
    o[i] -= zv[static_cast<size_t>(off[0])];
  });
  return out;
}

// ---- onnxruntime's MLAS arithmetic (the com.microsoft quantized ops, x86-64) ----
//
// Both round half to even through cvtps (the MXCSR default) after clamping in float to
// [lowest - zp, max - zp], so the result is saturate(round(v) + zp).

// MlasQuantizeLinear: round(x / scale) + zp, a true float division.
template <typename Q>
Q mlas_quantize(float x, float scale, int32_t zp) {
  const float lo = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::min()) - zp);
  const float hi = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::max()) - zp);
  float v = x / scale;
  v = v > lo ? v : lo;  // maxps: NaN takes the lower end
  v = std::min(v, hi);
  return static_cast<Q>(static_cast<int32_t>(std::nearbyint(v)) + zp);
}

// MlasRequantizeOutput: round(float(acc) * scale) + zp, one float multiply.
template <typename Q>
Q mlas_requantize(int32_t acc, float scale, int32_t zp) {
  return mlas_quantize<Q>(static_cast<float>(acc) * scale, 1.0f, zp);
}

// The int32 cvtps gives for v (INT32_MIN for NaN and out of range), saturated to Q as the packing
// instructions do (through int16).
template <typename Q>
Q mlas_pack(float v) {
  const int32_t r = std::isfinite(v) && std::fabs(v) < 2147483648.0f
                        ? static_cast<int32_t>(std::nearbyint(v))
                        : std::numeric_limits<int32_t>::min();
  return static_cast<Q>(
      std::clamp<int32_t>(r, std::numeric_limits<Q>::min(), std::numeric_limits<Q>::max()));
}

// The values of a scale (or any small float) tensor as doubles.
inline std::vector<double> values_of(const ir::Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.as_double(i);
  return v;
}

}  // namespace xopt::exec::quant
