// Integer matrix products: MatMulInteger, QLinearMatMul, and onnxruntime's com.microsoft
// DynamicQuantizeMatMul (A quantized on the fly to uint8), MatMulIntegerToFloat and QGemm. The
// products are exact (double GEMMs over zero-point-shifted values, see quant_util.h); scaling
// follows the ONNX reference (QLinearMatMul) or onnxruntime's float epilogue (the com.microsoft
// ops).
#include <vector>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/kernels/nn_gemm.h"
#include "executor/cpu/kernels/quant_util.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec::quant {
namespace {

constexpr const char* kMs = "com.microsoft";

// numpy matmul of two double tensors, with MatMul's shape checks and errors naming the node.
Result<ir::Tensor> matmul_double(const KernelContext& ctx, const ir::Tensor& a,
                                 const ir::Tensor& b) {
  std::vector<ir::Tensor> outs;
  KernelContext inner(ctx.node(), {&a, &b}, &outs, nullptr);
  XOPT_RETURN_IF_ERROR(nn::run_matmul(inner, nn::MatMulOptions{}));
  return std::move(outs[0]);
}

// The exact product (a - a_zero_point) @ (b - b_zero_point); a's zero point may be per row, b's
// per column.
Result<ir::Tensor> integer_matmul(const KernelContext& ctx, const ir::Tensor& a,
                                  const ir::Tensor* a_zp, const ir::Tensor& b,
                                  const ir::Tensor* b_zp) {
  XOPT_ASSIGN_OR_RETURN(ir::Tensor ad, shifted_double(ctx, a, a_zp, /*per_row=*/true, "A"));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor bd, shifted_double(ctx, b, b_zp, /*per_row=*/false, "B"));
  return matmul_double(ctx, ad, bd);
}

// Index of the row (second-to-last dim) and column (last dim) of element i of a matmul result.
struct RowCol {
  int64_t rows, cols;
  int64_t row(int64_t i) const { return (i / cols) % rows; }
  int64_t col(int64_t i) const { return i % cols; }
};
RowCol row_col(const ir::Tensor& y) {
  const size_t r = y.rank();
  return {r >= 2 ? y.dims()[r - 2] : 1, r >= 1 ? y.dims()[r - 1] : 1};
}

// A per-tensor or 1-D scale / zero point of `n` elements (per row or per column); error otherwise.
Status check_vector(const KernelContext& ctx, const ir::Tensor* t, int64_t n, const char* what) {
  if (t == nullptr || t->numel() == 1 || (t->rank() == 1 && t->dims()[0] == n)) return Status::ok();
  return ctx.error(std::string(what) + " must be a scalar or have " + std::to_string(n) +
                   " elements, got " + ir::dims_string(t->dims()));
}
double element(const std::vector<double>& v, int64_t i) {
  return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
}

// v rounded to the precision of the float type t (the reference computes scale products there).
double in_precision(ir::DType t, double v) {
  if (t == ir::DType::kFloat16) return ir::half_to_float(ir::float_to_half(static_cast<float>(v)));
  if (t == ir::DType::kBFloat16)
    return ir::bfloat16_to_float(ir::float_to_bfloat16(static_cast<float>(v)));
  if (t == ir::DType::kDouble) return v;
  return static_cast<float>(v);
}

Status matmul_integer(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* a, required_input(ctx, 0, "A"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* b, required_input(ctx, 1, "B"));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor acc, integer_matmul(ctx, *a, ctx.input(2), *b, ctx.input(3)));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kInt32, acc.dims()));
  const double* ad = acc.data<double>();
  int32_t* yd = y->mutable_data<int32_t>();
  for (int64_t i = 0; i < acc.numel(); ++i) yd[i] = static_cast<int32_t>(ad[i]);
  return Status::ok();
}

// y = saturate(round(acc * (a_scale * b_scale / y_scale)) + y_zero_point), the multiplier in the
// scales' precision as the ONNX reference computes it; scales of a and y per row, of b per column.
Status qlinear_matmul(KernelContext& ctx) {
  for (size_t i : {0, 1, 3, 4, 6, 7})
    if (ctx.input(i) == nullptr)
      return ctx.error("required input " + std::to_string(i) + " is missing");
  const ir::Tensor &a = *ctx.input(0), &a_scale = *ctx.input(1), &b = *ctx.input(3);
  const ir::Tensor &b_scale = *ctx.input(4), &y_scale = *ctx.input(6), &y_zp = *ctx.input(7);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor acc, integer_matmul(ctx, a, ctx.input(2), b, ctx.input(5)));
  const RowCol rc = row_col(acc);
  XOPT_RETURN_IF_ERROR(check_vector(ctx, &a_scale, rc.rows, "a_scale"));
  XOPT_RETURN_IF_ERROR(check_vector(ctx, &b_scale, rc.cols, "b_scale"));
  XOPT_RETURN_IF_ERROR(check_vector(ctx, &y_scale, rc.rows, "y_scale"));
  XOPT_RETURN_IF_ERROR(check_vector(ctx, &y_zp, rc.rows, "y_zero_point"));
  const std::vector<double> as = values_of(a_scale), bs = values_of(b_scale),
                            ys = values_of(y_scale), yz = values_of(y_zp);
  const ir::DType st = a_scale.dtype();
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, y_zp.dtype(), acc.dims()));
  const double* ad = acc.data<double>();
  return dispatch_quantized(ctx, y_zp.dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q* yd = y->mutable_data<Q>();
    for (int64_t i = 0; i < acc.numel(); ++i) {
      const int64_t r = rc.row(i), c = rc.col(i);
      const double mult =
          in_precision(st, in_precision(st, element(as, r) * element(bs, c)) / element(ys, r));
      yd[i] = saturate_round<Q>(round_half_even(ad[i] * mult) + element(yz, r));
    }
    return Status::ok();
  });
}

// onnxruntime's epilogue of the com.microsoft integer matmuls: y = float(acc) * (a_scale *
// b_scale[col]) + bias[col], in float.
Status scale_bias_output(KernelContext& ctx, const ir::Tensor& acc, float a_scale,
                         const ir::Tensor& b_scale, const ir::Tensor* bias, ir::DType out) {
  const RowCol rc = row_col(acc);
  XOPT_RETURN_IF_ERROR(check_vector(ctx, &b_scale, rc.cols, "b_scale"));
  if (bias != nullptr && !(bias->rank() == 1 && bias->dims()[0] == rc.cols))
    return ctx.error("bias must be 1-D with " + std::to_string(rc.cols) + " elements, got " +
                     ir::dims_string(bias->dims()));
  const std::vector<double> bs = values_of(b_scale);
  const std::vector<double> bias_v = bias != nullptr ? values_of(*bias) : std::vector<double>();
  std::vector<float> mult(static_cast<size_t>(rc.cols));
  for (int64_t c = 0; c < rc.cols; ++c)
    mult[static_cast<size_t>(c)] = a_scale * static_cast<float>(element(bs, c));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, acc.dims()));
  const double* ad = acc.data<double>();
  return dispatch_float(out, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* yd = y->mutable_data<T>();
    for (int64_t i = 0; i < acc.numel(); ++i) {
      const auto c = static_cast<size_t>(rc.col(i));
      float v = static_cast<float>(ad[i]) * mult[c];
      if (!bias_v.empty()) v += static_cast<float>(bias_v[c]);
      yd[i] = from_compute<T>(v);
    }
    return Status::ok();
  });
}

// A (float), B (int8/uint8), b_scale, b_zero_point, bias: A is quantized to uint8 with
// DynamicQuantizeLinear's rule over the whole tensor, as onnxruntime does.
Status dynamic_quantize_matmul(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* a, required_input(ctx, 0, "A"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* b, required_input(ctx, 1, "B"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* b_scale, required_input(ctx, 2, "b_scale"));
  if (a->dtype() != ir::DType::kFloat)
    return ctx.error("A must be float, got " + std::string(ir::dtype_name(a->dtype())));
  const DynamicParams p = dynamic_uint8_params(a->data<float>(), a->numel());
  ir::Tensor aq(ir::DType::kUInt8, a->dims());
  quantize_uint8(a->data<float>(), a->numel(), p, aq.mutable_data<uint8_t>());
  const ir::Tensor a_zp = ir::Tensor::scalar<uint8_t>(p.zero_point);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor acc, integer_matmul(ctx, aq, &a_zp, *b, ctx.input(3)));
  return scale_bias_output(ctx, acc, p.scale, *b_scale, ctx.input(4), ir::DType::kFloat);
}

// A, B (8-bit), a_scale (per tensor), b_scale (per tensor or column), a_zero_point, b_zero_point,
// bias.
Status matmul_integer_to_float(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* a, required_input(ctx, 0, "A"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* b, required_input(ctx, 1, "B"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* a_scale, required_input(ctx, 2, "a_scale"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* b_scale, required_input(ctx, 3, "b_scale"));
  if (a_scale->numel() != 1) return ctx.unsupported("a_scale per row (onnxruntime takes a scalar)");
  XOPT_ASSIGN_OR_RETURN(ir::Tensor acc, integer_matmul(ctx, *a, ctx.input(4), *b, ctx.input(5)));
  return scale_bias_output(ctx, acc, static_cast<float>(a_scale->as_double(0)), *b_scale,
                           ctx.input(6), a_scale->dtype());
}

// A 2-D tensor as doubles, transposed when `trans`.
Result<ir::Tensor> matrix_double(const KernelContext& ctx, const ir::Tensor& t, bool trans,
                                 const char* what) {
  if (t.rank() != 2)
    return ctx.error(std::string(what) + " must be 2-D, got " + ir::dims_string(t.dims()));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor d, shifted_double(ctx, t, nullptr, false, what));
  if (!trans) return d;
  const int64_t r = t.dims()[0], c = t.dims()[1];
  ir::Tensor out(ir::DType::kDouble, {c, r});
  const double* pd = d.data<double>();
  double* po = out.mutable_data<double>();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) po[j * r + i] = pd[i * c + j];
  return out;
}

// onnxruntime's com.microsoft QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point
// (per tensor or per column), C (int32, broadcast to [M, N]), y_scale, y_zero_point; attributes
// transA, transB, alpha (beta is not read: C is added as it is, as onnxruntime does).
//   acc = C + (A - a_zp) @ (B - b_zp[n]) in int32;  s[n] = alpha * a_scale * b_scale[n] (/ y_scale)
//   y = requantize(acc, s[n], y_zp) with y_zero_point, else float(acc) * s[n] (float output).
Status qgemm(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* a, required_input(ctx, 0, "A"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* a_scale, required_input(ctx, 1, "a_scale"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* b, required_input(ctx, 3, "B"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* b_scale, required_input(ctx, 4, "b_scale"));
  const ir::Tensor *a_zp = ctx.input(2), *b_zp = ctx.input(5), *c = ctx.input(6);
  const ir::Tensor *y_scale = ctx.input(7), *y_zp = ctx.input(8);
  if (a_scale->numel() != 1 || (a_zp != nullptr && a_zp->numel() != 1))
    return ctx.error("a_scale and a_zero_point must be scalars");
  XOPT_ASSIGN_OR_RETURN(ir::Tensor ad,
                        matrix_double(ctx, *a, ctx.node().attr_int("transA", 0) != 0, "A"));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor bd,
                        matrix_double(ctx, *b, ctx.node().attr_int("transB", 0) != 0, "B"));
  const int64_t m = ad.dims()[0], k = ad.dims()[1], n = bd.dims()[1];
  if (bd.dims()[0] != k)
    return ctx.error("A " + ir::dims_string(ad.dims()) + " and B " + ir::dims_string(bd.dims()) +
                     " (as multiplied) do not match");
  XOPT_RETURN_IF_ERROR(check_vector(ctx, b_scale, n, "b_scale"));
  XOPT_RETURN_IF_ERROR(check_vector(ctx, b_zp, n, "b_zero_point"));
  const double za = a_zp != nullptr ? a_zp->as_double(0) : 0.0;
  double* pa = ad.mutable_data<double>();
  for (int64_t i = 0; i < ad.numel(); ++i) pa[i] -= za;
  if (b_zp != nullptr) {
    const std::vector<double> zb = values_of(*b_zp);
    double* pb = bd.mutable_data<double>();
    for (int64_t i = 0; i < bd.numel(); ++i) pb[i] -= element(zb, i % n);
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor acc, matmul_double(ctx, ad, bd));
  double* pacc = acc.mutable_data<double>();
  if (c != nullptr) {
    if (c->dtype() != ir::DType::kInt32)
      return ctx.error("C must be int32, got " + std::string(ir::dtype_name(c->dtype())));
    auto dims = broadcast_shapes({acc.dims(), c->dims()});
    if (!dims.is_ok() || *dims != acc.dims())
      return ctx.error("C " + ir::dims_string(c->dims()) + " does not broadcast to [" +
                       std::to_string(m) + "," + std::to_string(n) + "]");
    const int32_t* pc = c->data<int32_t>();
    for_each_broadcast(acc.dims(), {c->dims()},
                       [&](int64_t i, const int64_t* off) { pacc[i] += pc[off[0]]; });
  }
  const auto alpha = ctx.node().attr_float("alpha", 1.0f);
  const auto sa = static_cast<float>(a_scale->as_double(0));
  const std::vector<double> sb = values_of(*b_scale);
  std::vector<float> scale(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    float s = alpha * sa * static_cast<float>(element(sb, j));
    if (y_scale != nullptr) s /= static_cast<float>(y_scale->as_double(0));
    scale[static_cast<size_t>(j)] = s;
  }
  auto acc_at = [&](int64_t i) {
    return static_cast<int32_t>(static_cast<int64_t>(pacc[i]));  // int32 as onnxruntime wraps it
  };
  if (y_zp == nullptr) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kFloat, acc.dims()));
    float* py = y->mutable_data<float>();
    for (int64_t i = 0; i < acc.numel(); ++i)
      py[i] = static_cast<float>(acc_at(i)) * scale[static_cast<size_t>(i % n)];
    return Status::ok();
  }
  if (y_zp->numel() != 1) return ctx.error("y_zero_point must be a scalar");
  const auto zy = static_cast<int32_t>(y_zp->as_double(0));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, y_zp->dtype(), acc.dims()));
  return dispatch_quantized(ctx, y_zp->dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    if constexpr (sizeof(Q) == 1) {
      Q* py = y->mutable_data<Q>();
      for (int64_t i = 0; i < acc.numel(); ++i)
        py[i] = mlas_requantize<Q>(acc_at(i), scale[static_cast<size_t>(i % n)], zy);
      return Status::ok();
    } else {
      return ctx.unsupported("a " + std::string(ir::dtype_name(y_zp->dtype())) +
                             " output (uint8 and int8 only)");
    }
  });
}

}  // namespace

XOPT_CPU_KERNEL(kMs, "QGemm", 1, 1, qgemm);
XOPT_CPU_KERNEL("", "MatMulInteger", 10, kLatestOpset, matmul_integer);
XOPT_CPU_KERNEL("", "QLinearMatMul", 10, kLatestOpset, qlinear_matmul);
XOPT_CPU_KERNEL(kMs, "DynamicQuantizeMatMul", 1, 1, dynamic_quantize_matmul);
XOPT_CPU_KERNEL(kMs, "MatMulIntegerToFloat", 1, 1, matmul_integer_to_float);

}  // namespace xopt::exec::quant
