// onnxruntime's com.microsoft quantized operators that onnxruntime's static quantizer writes in
// QOperator form, computed with the arithmetic of onnxruntime's x86-64 CPU kernels (MLAS), so
// that a quantized model gives onnxruntime's integers, not merely close ones:
//   QLinearAdd   C = pack(fma(a, sA/sC, fma(b, sB/sC, zC - (sA/sC*zA + sB/sC*zB))))  (AVX2);
//                with one side constant along the innermost run, that side's term is folded
//                into the constant first (onnxruntime's scalar-span kernel)
//   QLinearMul   C = pack(float((a - zA)(b - zB)) * (sA*sB/sC) + zC)
//   QLinearGlobalAveragePool  requantize(sum(x) - zX*N, sX / (sY*N))
//   QLinearSigmoid            a 256-entry table: quantize(logistic(sX * (x - zX)))
//   QLinearConcat             each input copied when its scale and zero point are the output's,
//                             else through the table quantize(sX * (x - zX))
//   QLinearSoftmax (uint8)    an exp table scaled by FLT_MAX / (D e^5), a float sum, and
//                             round(t * floor(1/sY) / sum) + zY
// `pack` is cvtps's int32 saturated to 8 bits, MlasQuantizeLinear and MlasRequantizeOutput are in
// quant_util.h, logistic is MLAS's rational approximation with its FMA3 kernel's steps.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/kernels/quant_util.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec::quant {
namespace {

constexpr const char* kMs = "com.microsoft";

// A scale input: a float scalar (or one-element tensor).
Result<float> scale_input(const KernelContext& ctx, size_t i, const char* what) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr) return ctx.error(std::string(what) + " is missing");
  if (t->numel() != 1)
    return ctx.error(std::string(what) + " must be a scalar, got " + ir::dims_string(t->dims()));
  return static_cast<float>(t->as_double(0));
}

// A zero-point input: a uint8 or int8 scalar, 0 when omitted.
Result<int32_t> zero_point_input(const KernelContext& ctx, size_t i, const char* what) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr) return 0;
  if (t->numel() != 1)
    return ctx.error(std::string(what) + " must be a scalar, got " + ir::dims_string(t->dims()));
  if (t->dtype() == ir::DType::kUInt8) return static_cast<int32_t>(t->data<uint8_t>()[0]);
  if (t->dtype() == ir::DType::kInt8) return static_cast<int32_t>(t->data<int8_t>()[0]);
  return ctx.error(std::string(what) + " must be uint8 or int8, got " +
                   std::string(ir::dtype_name(t->dtype())));
}

// Calls f(TypeTag<Q>) for uint8 and int8, the types these kernels take.
template <typename F>
Status dispatch_8bit(const KernelContext& ctx, ir::DType t, F&& f) {
  if (t == ir::DType::kUInt8) return f(TypeTag<uint8_t>{});
  if (t == ir::DType::kInt8) return f(TypeTag<int8_t>{});
  return ctx.unsupported("quantized type " + std::string(ir::dtype_name(t)) +
                         " (uint8 and int8 only)");
}

struct Quantized {
  const ir::Tensor* x;
  float scale;
  int32_t zero_point;
};
Result<Quantized> quantized_input(const KernelContext& ctx, size_t x, const char* name) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* t, required_input(ctx, x, name));
  XOPT_ASSIGN_OR_RETURN(float s, scale_input(ctx, x + 1, (std::string(name) + "_scale").c_str()));
  XOPT_ASSIGN_OR_RETURN(int32_t z,
                        zero_point_input(ctx, x + 2, (std::string(name) + "_zero_point").c_str()));
  return Quantized{t, s, z};
}

// Which of onnxruntime's three broadcast kernels runs (element_wise_ops.h's BroadcastLooper): the
// first input constant along the innermost run of the output, the second, or neither.
enum class Span { kGeneral, kFirstScalar, kSecondScalar };
Span span_kind(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
               const std::vector<int64_t>& out) {
  const size_t r = out.size();
  auto dim = [r](const std::vector<int64_t>& d, size_t i) {
    return i + d.size() >= r ? d[i + d.size() - r] : int64_t{1};
  };
  for (size_t k = r; k-- > 0;) {
    if (out[k] == 1) continue;
    const bool a_moves = dim(a, k) != 1, b_moves = dim(b, k) != 1;
    if (a_moves && b_moves) return Span::kGeneral;
    return a_moves ? Span::kSecondScalar : Span::kFirstScalar;
  }
  return Span::kFirstScalar;  // a single element: onnxruntime tests input 0 first
}

// QLinearAdd and QLinearMul: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
// C_zero_point.
template <bool kAdd>
Status qlinear_binary(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Quantized a, quantized_input(ctx, 0, "A"));
  XOPT_ASSIGN_OR_RETURN(Quantized b, quantized_input(ctx, 3, "B"));
  XOPT_ASSIGN_OR_RETURN(float sc, scale_input(ctx, 6, "C_scale"));
  XOPT_ASSIGN_OR_RETURN(int32_t zc, zero_point_input(ctx, 7, "C_zero_point"));
  if (a.x->dtype() != b.x->dtype())
    return ctx.error("A and B must have the same type, got " +
                     std::string(ir::dtype_name(a.x->dtype())) + " and " +
                     std::string(ir::dtype_name(b.x->dtype())));
  XOPT_ASSIGN_OR_RETURN(auto dims, broadcast_shapes({a.x->dims(), b.x->dims()}));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, a.x->dtype(), dims));
  const Span span = span_kind(a.x->dims(), b.x->dims(), dims);
  return dispatch_8bit(ctx, a.x->dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    const Q* pa = a.x->data<Q>();
    const Q* pb = b.x->data<Q>();
    Q* py = y->mutable_data<Q>();
    if constexpr (kAdd) {
      // MLAS's kernel takes the span as its A; with the first input scalar the two swap.
      const bool swap = span == Span::kFirstScalar;
      const Quantized& s = swap ? b : a;  // the span (or the first of two spans)
      const Quantized& t = swap ? a : b;
      const float r_s = s.scale / sc, r_t = t.scale / sc;
      const float fixed = static_cast<float>(zc) - (r_s * static_cast<float>(s.zero_point) +
                                                    r_t * static_cast<float>(t.zero_point));
      for_each_broadcast(dims, {a.x->dims(), b.x->dims()}, [&](int64_t i, const int64_t* off) {
        const auto va = static_cast<float>(pa[off[0]]), vb = static_cast<float>(pb[off[1]]);
        const float vs = swap ? vb : va, vt = swap ? va : vb;
        float v = 0;
        if (span == Span::kGeneral) {
          v = std::fma(vs, r_s, std::fma(vt, r_t, fixed));
        } else {
          v = std::fma(vs, r_s, fixed + vt * r_t);
        }
        py[i] = mlas_pack<Q>(v);
      });
    } else {
      const float ratio = a.scale * b.scale / sc;
      const auto zcf = static_cast<float>(zc);
      for_each_broadcast(dims, {a.x->dims(), b.x->dims()}, [&](int64_t i, const int64_t* off) {
        const int32_t prod = (static_cast<int32_t>(pa[off[0]]) - a.zero_point) *
                             (static_cast<int32_t>(pb[off[1]]) - b.zero_point);
        py[i] = mlas_pack<Q>(static_cast<float>(prod) * ratio + zcf);
      });
    }
    return Status::ok();
  });
}

// X, x_scale, x_zero_point, y_scale, y_zero_point; attribute channels_last.
Status qlinear_global_average_pool(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Quantized x, quantized_input(ctx, 0, "X"));
  XOPT_ASSIGN_OR_RETURN(float sy, scale_input(ctx, 3, "y_scale"));
  XOPT_ASSIGN_OR_RETURN(int32_t zy, zero_point_input(ctx, 4, "y_zero_point"));
  const std::vector<int64_t>& d = x.x->dims();
  if (d.size() < 3) return ctx.error("X must have rank >= 3, got " + ir::dims_string(d));
  const bool last = ctx.node().attr_int("channels_last", 0) != 0;
  const int64_t n = d[0], c = last ? d.back() : d[1];
  const int64_t image = product(d, last ? 1 : 2, last ? d.size() - 1 : d.size());
  if (image >= (int64_t{1} << 24))
    return ctx.error("the image has " + std::to_string(image) +
                     " pixels; onnxruntime refuses 2^24 or more");
  std::vector<int64_t> out = d;
  for (size_t k = last ? 1 : 2; k < (last ? d.size() - 1 : d.size()); ++k) out[k] = 1;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x.x->dtype(), out));
  const float scale = x.scale / (sy * static_cast<float>(image));
  return dispatch_8bit(ctx, x.x->dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    const Q* px = x.x->data<Q>();
    Q* py = y->mutable_data<Q>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        int64_t acc = -static_cast<int64_t>(x.zero_point) * image;
        for (int64_t p = 0; p < image; ++p)
          acc += px[last ? (b * image + p) * c + ch : (b * c + ch) * image + p];
        py[b * c + ch] = mlas_requantize<Q>(static_cast<int32_t>(acc), scale, zy);
      }
    }
    return Status::ok();
  });
}

// MLAS's logistic (logistic.cpp's constants) as its FMA3 kernel computes it: clamp to [-18, 18],
// an odd degree-9 numerator over an even degree-10 denominator, + 0.5, at least 0.
float mlas_logistic(float x) {
  x = std::min(18.0f, std::max(-18.0f, x));
  const float x2 = x * x;
  float p = std::fma(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = std::fma(x2, p, 6.08574864600143e-05f);
  p = std::fma(x2, p, 8.51377133304701e-03f);
  p = std::fma(x2, p, 2.48287947061529e-01f);
  p = x * p;
  float q = std::fma(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = std::fma(x2, q, 6.29106785017040e-06f);
  q = std::fma(x2, q, 1.70198817374094e-03f);
  q = std::fma(x2, q, 1.16817656904453e-01f);
  q = std::fma(x2, q, 9.93151921023180e-01f);
  return std::max(0.0f, p / q + 0.5f);
}

// The 256 outputs of x -> quantize(f(sx * (x - zx))), indexed by x's byte.
template <typename Q, typename F>
std::vector<Q> lookup_table(float sx, int32_t zx, float sy, int32_t zy, F&& f) {
  std::vector<Q> table(256);
  for (int i = 0; i < 256; ++i) {
    const auto x = static_cast<Q>(static_cast<uint8_t>(i));
    const float v = sx * static_cast<float>(static_cast<int32_t>(x) - zx);
    table[static_cast<size_t>(i)] = mlas_quantize<Q>(f(v), sy, zy);
  }
  return table;
}

template <typename Q>
void apply_table(const std::vector<Q>& table, const Q* x, Q* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = table[static_cast<uint8_t>(x[i])];
}

// X, X_scale, X_zero_point, Y_scale, Y_zero_point.
Status qlinear_sigmoid(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Quantized x, quantized_input(ctx, 0, "X"));
  XOPT_ASSIGN_OR_RETURN(float sy, scale_input(ctx, 3, "Y_scale"));
  XOPT_ASSIGN_OR_RETURN(int32_t zy, zero_point_input(ctx, 4, "Y_zero_point"));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x.x->dtype(), x.x->dims()));
  return dispatch_8bit(ctx, x.x->dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    apply_table(lookup_table<Q>(x.scale, x.zero_point, sy, zy, mlas_logistic), x.x->data<Q>(),
                y->mutable_data<Q>(), x.x->numel());
    return Status::ok();
  });
}

// Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; attribute axis.
Status qlinear_concat(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(float sy, scale_input(ctx, 0, "Y_scale"));
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* y_zp, required_input(ctx, 1, "Y_zero_point"));
  XOPT_ASSIGN_OR_RETURN(int32_t zy, zero_point_input(ctx, 1, "Y_zero_point"));
  if (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3 != 0)
    return ctx.error(
        "takes Y_scale, Y_zero_point and then (X, X_scale, X_zero_point) triples, got " +
        std::to_string(ctx.num_inputs()) + " inputs");
  std::vector<Quantized> in;
  for (size_t i = 2; i < ctx.num_inputs(); i += 3) {
    XOPT_ASSIGN_OR_RETURN(Quantized q, quantized_input(ctx, i, "X"));
    if (q.x->dtype() != y_zp->dtype())
      return ctx.error("input " + std::to_string(i) + " is " +
                       std::string(ir::dtype_name(q.x->dtype())) + ", the output " +
                       std::string(ir::dtype_name(y_zp->dtype())));
    in.push_back(q);
  }
  const std::vector<int64_t>& d0 = in[0].x->dims();
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 0),
                                                     static_cast<int64_t>(d0.size()), "axis"));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> out = d0;
  out[a] = 0;
  for (const Quantized& q : in) {
    const std::vector<int64_t>& d = q.x->dims();
    bool fits = d.size() == d0.size();
    for (size_t k = 0; fits && k < d.size(); ++k) fits = k == a || d[k] == d0[k];
    if (!fits)
      return ctx.error("inputs " + ir::dims_string(d0) + " and " + ir::dims_string(d) +
                       " differ outside axis " + std::to_string(axis));
    out[a] += d[a];
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, y_zp->dtype(), out));
  const int64_t outer = product(out, 0, a), inner = product(out, a + 1, out.size());
  return dispatch_8bit(ctx, y_zp->dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q* py = y->mutable_data<Q>();
    int64_t at = 0;  // where this input's block starts within an output row
    for (const Quantized& q : in) {
      const int64_t block = q.x->dims()[a] * inner;
      const Q* px = q.x->data<Q>();
      const bool copy = q.scale == sy && q.zero_point == zy;
      const std::vector<Q> table =
          copy ? std::vector<Q>{}
               : lookup_table<Q>(q.scale, q.zero_point, sy, zy, [](float v) { return v; });
      for (int64_t o = 0; o < outer; ++o) {
        Q* dst = py + o * out[a] * inner + at;
        if (copy) {
          std::memcpy(dst, px + o * block, static_cast<size_t>(block) * sizeof(Q));
        } else {
          apply_table(table, px + o * block, dst, block);
        }
      }
      at += block;
    }
    return Status::ok();
  });
}

// X, X_scale, X_zero_point (unused, as in onnxruntime), Y_scale, Y_zero_point; attributes axis
// and opset (before 13 softmax runs over the flattened dims from axis, from 13 over axis alone).
Status qlinear_softmax(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Quantized x, quantized_input(ctx, 0, "X"));
  XOPT_ASSIGN_OR_RETURN(float sy, scale_input(ctx, 3, "Y_scale"));
  XOPT_ASSIGN_OR_RETURN(int32_t zy, zero_point_input(ctx, 4, "Y_zero_point"));
  if (!ctx.node().has_attr("opset")) return ctx.error("the opset attribute is required");
  const int64_t opset = ctx.node().attr_int("opset", 0);
  const std::vector<int64_t>& d = x.x->dims();
  const auto rank = static_cast<int64_t>(d.size());
  XOPT_ASSIGN_OR_RETURN(
      int64_t axis,
      normalize_axis(ctx, ctx.node().attr_int("axis", opset < 13 ? 1 : -1), rank, "axis"));
  if (x.x->dtype() != ir::DType::kUInt8)
    return ctx.unsupported("QLinearSoftmax of " + std::string(ir::dtype_name(x.x->dtype())) +
                           " (uint8 only)");
  const auto a = static_cast<size_t>(axis);
  // Softmax over `len` elements `stride` apart, for each of the `outer` x `inner` rows.
  const int64_t len = opset < 13 ? product(d, a, d.size()) : d[a];
  const int64_t inner = opset < 13 ? 1 : product(d, a + 1, d.size());
  const int64_t outer = product(d, 0, a);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x.x->dtype(), d));
  if (len == 0 || x.x->numel() == 0) return Status::ok();
  // The table: exp(sx * (k - 255)) scaled by FLT_MAX / (len e^5), built in double.
  double shift = std::log(std::numeric_limits<float>::max() / static_cast<float>(len));
  shift = std::max(0.0, shift - 5.0) / static_cast<double>(x.scale);
  std::vector<float> table(256);
  for (int i = 0; i < 256; ++i)
    table[static_cast<size_t>(i)] = static_cast<float>(
        std::exp((static_cast<double>(i) - 255 + shift) * static_cast<double>(x.scale)));
  const float ys = std::floor(1.0f / sy);
  const uint8_t* px = x.x->data<uint8_t>();
  uint8_t* py = y->mutable_data<uint8_t>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * len * inner + in;
      uint8_t xmax = 0;
      for (int64_t k = 0; k < len; ++k) xmax = std::max(xmax, px[base + k * inner]);
      const float* t = table.data() + 255 - xmax;
      float sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += t[px[base + k * inner]];
      if (sum == 0) {  // onnxruntime leaves the row unwritten; zeros here
        for (int64_t k = 0; k < len; ++k) py[base + k * inner] = 0;
        continue;
      }
      for (int64_t k = 0; k < len; ++k) {
        // onnxruntime converts to uint32 whatever the value (undefined past its range, as with
        // a y_scale so small that the product overflows): here those saturate.
        const float v = std::nearbyint(t[px[base + k * inner]] * ys / sum) + static_cast<float>(zy);
        py[base + k * inner] = v >= 0 && v <= 255 ? static_cast<uint8_t>(v) : (v < 0 ? 0 : 255);
      }
    }
  }
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL(kMs, "QLinearAdd", 1, 1, qlinear_binary<true>);
XOPT_CPU_KERNEL(kMs, "QLinearMul", 1, 1, qlinear_binary<false>);
XOPT_CPU_KERNEL(kMs, "QLinearGlobalAveragePool", 1, 1, qlinear_global_average_pool);
XOPT_CPU_KERNEL(kMs, "QLinearSigmoid", 1, 1, qlinear_sigmoid);
XOPT_CPU_KERNEL(kMs, "QLinearConcat", 1, 1, qlinear_concat);
XOPT_CPU_KERNEL(kMs, "QLinearSoftmax", 1, 1, qlinear_softmax);

}  // namespace xopt::exec::quant
