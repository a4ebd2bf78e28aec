// Normalizations: BatchNormalization (inference and training mode), InstanceNormalization,
// LayerNormalization (with Mean / InvStdDev outputs). Statistics are accumulated in double.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/kernels/nn_util.h"
#include "executor/cpu/parallel.h"

namespace xopt::exec::nn {
namespace {

std::vector<double> to_doubles(const ir::Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  const Status st = dispatch_numeric(t.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(to_compute(p[i]));
    return Status::ok();
  });
  if (!st.is_ok())
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.as_double(static_cast<int64_t>(i));
  return v;
}

template <typename T>
void store_doubles(const std::vector<double>& v, ir::Tensor* t) {
  T* p = t->mutable_data<T>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(v[i]));
}

Status store(const std::vector<double>& v, ir::Tensor* t) {
  return dispatch_float(t->dtype(), [&](auto tag) -> Status {
    store_doubles<typename decltype(tag)::type>(v, t);
    return Status::ok();
  });
}

// BatchNormalization. Inference: per channel y = scale * (x - mean) / sqrt(var + eps) + B.
// Training (training_mode=1 from opset 14; before that, is_test=0 at opsets <= 6 or extra outputs
// requested at 7-13): batch statistics over N and the spatial dims normalize x; outputs 1 and 2 are
// the running statistics input * momentum + batch * (1 - momentum) (population variance), outputs 3
// and 4 (opsets < 14) the batch mean and variance. Before opset 9 `spatial=0` keeps per-activation
// statistics: scale, B, mean and var then have shape [C, D1, ...].
Status batch_norm(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 2, 3, 4}));
  const ir::Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  const int64_t opset = ctx.opset();
  if (x.rank() < 2) return ctx.error("X must have rank >= 2 ([N, C, ...])");
  const double eps = node.attr_float("epsilon", 1e-5f);
  const double momentum = node.attr_float("momentum", 0.9f);
  bool training = false;
  if (opset >= 14)
    training = node.attr_int("training_mode", 0) != 0;
  else if (opset <= 6)
    training = node.attr_int("is_test", 0) == 0 && node.num_outputs() > 1;
  else
    training = node.num_outputs() > 1;
  const int64_t n = x.dims()[0], c = x.dims()[1], sp = product(x.dims(), 2);
  // Per-activation statistics (spatial=0 before opset 9) are the same computation with C*sp
  // "channels" and a spatial size of 1.
  const bool per_activation = opset < 9 && node.attr_int("spatial", 1) == 0;
  const int64_t ch = per_activation ? c * sp : c, inner = per_activation ? 1 : sp;
  for (size_t i = 1; i <= 4; ++i)
    if (ctx.input(i)->numel() != ch)
      return ctx.error("input " + std::to_string(i) + " has " +
                       std::to_string(ctx.input(i)->numel()) + " elements, expected " +
                       std::to_string(ch));
  const std::vector<double> scale = to_doubles(*ctx.input(1)), bias = to_doubles(*ctx.input(2));
  std::vector<double> mean = to_doubles(*ctx.input(3)), var = to_doubles(*ctx.input(4));
  if (!training) {
    for (size_t i = 1; i < ctx.num_outputs(); ++i)
      if (ctx.wants_output(i))
        return ctx.error("output " + std::to_string(i) + " exists only in training mode");
    // y = x * a + c per channel, in the compute type.
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x.dtype(), x.dims()));
    return dispatch_float(x.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* xd = x.data<T>();
      T* yd = yt->mutable_data<T>();
      parallel_for(ch, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n * inner)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t k = lo; k < hi; ++k) {
                       C ca, cc;
                       if constexpr (std::is_same_v<C, float>) {
                         // onnxruntime's order, in float: dynamically quantized models requantize
                         // right after a BatchNormalization, and one ulp there moves a uint8 step
                         // (mobilenet_v2 under quantize_dynamic: 3.5e-2 of the logits' scale).
                         const float inv_std =
                             1.0f / std::sqrt(static_cast<float>(var[k]) + static_cast<float>(eps));
                         ca = inv_std * static_cast<float>(scale[k]);
                         cc = static_cast<float>(bias[k]) - static_cast<float>(mean[k]) * ca;
                       } else {
                         const double a = scale[k] / std::sqrt(var[k] + eps);
                         ca = static_cast<C>(a);
                         cc = static_cast<C>(bias[k] - mean[k] * a);
                       }
                       for (int64_t b = 0; b < n; ++b) {
                         const int64_t base = (b * ch + k) * inner;
                         for (int64_t i = 0; i < inner; ++i)
                           yd[base + i] =
                               from_compute<T>(static_cast<C>(to_compute(xd[base + i]) * ca + cc));
                       }
                     }
                   });
      return Status::ok();
    });
  }
  const std::vector<double> xv = to_doubles(x);
  // Training: batch statistics.
  std::vector<double> bmean(ch, 0.0), bvar(ch, 0.0);
  {
    const double count = static_cast<double>(n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t k = 0; k < ch; ++k)
        for (int64_t i = 0; i < inner; ++i) bmean[k] += xv[(b * ch + k) * inner + i];
    for (auto& m : bmean) m /= count;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t k = 0; k < ch; ++k)
        for (int64_t i = 0; i < inner; ++i) {
          const double d = xv[(b * ch + k) * inner + i] - bmean[k];
          bvar[k] += d * d;
        }
    for (auto& v : bvar) v /= count;
  }
  std::vector<double> y(xv.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < ch; ++k) {
      const double a = scale[k] / std::sqrt(bvar[k] + eps);
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (b * ch + k) * inner + i;
        y[at] = (xv[at] - bmean[k]) * a + bias[k];
      }
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output(0, x.dtype(), x.dims()));
  XOPT_RETURN_IF_ERROR(store(y, yt));
  std::vector<double> run_mean(ch), run_var(ch);
  for (int64_t k = 0; k < ch; ++k) {
    run_mean[k] = mean[k] * momentum + bmean[k] * (1 - momentum);
    run_var[k] = var[k] * momentum + bvar[k] * (1 - momentum);
  }
  const std::vector<double>* outs[] = {&run_mean, &run_var, &bmean, &bvar};
  for (size_t i = 1; i < ctx.num_outputs() && i <= 4; ++i) {
    if (!ctx.wants_output(i)) continue;
    const ir::Tensor& like = *ctx.input(i <= 2 ? i + 2 : 3);
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output(i, like.dtype(), like.dims()));
    XOPT_RETURN_IF_ERROR(store(*outs[i - 1], o));
  }
  return Status::ok();
}

// InstanceNormalization: per (n, c) statistics over the spatial dims.
Status instance_norm(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 2}));
  const ir::Tensor& x = *ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2 ([N, C, ...])");
  const int64_t n = x.dims()[0], c = x.dims()[1], sp = product(x.dims(), 2);
  if (ctx.input(1)->numel() != c || ctx.input(2)->numel() != c)
    return ctx.error("scale and B must have C = " + std::to_string(c) + " elements");
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const std::vector<double> scale = to_doubles(*ctx.input(1)), bias = to_doubles(*ctx.input(2));
  const std::vector<double> xv = to_doubles(x);
  std::vector<double> y(xv.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k) {
      const double* xs = xv.data() + (b * c + k) * sp;
      double mean = 0.0, var = 0.0;
      for (int64_t i = 0; i < sp; ++i) mean += xs[i];
      mean /= static_cast<double>(sp);
      for (int64_t i = 0; i < sp; ++i) var += (xs[i] - mean) * (xs[i] - mean);
      var /= static_cast<double>(sp);
      const double a = scale[k] / std::sqrt(var + eps);
      for (int64_t i = 0; i < sp; ++i) y[(b * c + k) * sp + i] = (xs[i] - mean) * a + bias[k];
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output(0, x.dtype(), x.dims()));
  return store(y, yt);
}

// True when `d` (which broadcasts to `x`) is x's dims from `axis` on, with only ones before: one
// value per element of a row of `x` flattened at `axis`.
bool is_row_shaped(const std::vector<int64_t>& d, const std::vector<int64_t>& x, size_t axis) {
  if (d.size() > x.size()) return false;
  const size_t pad = x.size() - d.size();
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t di = i < pad ? 1 : d[i - pad];
    if (di != (i < axis ? 1 : x[i])) return false;
  }
  return true;
}

// One row of LayerNormalization, in double: y = (x - mean) / sqrt(var + eps) * scale + bias.
template <typename T>
void normalize_row(const T* x, int64_t n, double eps, const double* scale, const double* bias, T* y,
                   double* mean, double* inv) {
  double m = 0.0, v = 0.0;
  for (int64_t i = 0; i < n; ++i) m += static_cast<double>(to_compute(x[i]));
  m /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(to_compute(x[i])) - m;
    v += d * d;
  }
  v /= static_cast<double>(n);
  const double s = 1.0 / std::sqrt(v + eps);
  for (int64_t i = 0; i < n; ++i) {
    const double r = (static_cast<double>(to_compute(x[i])) - m) * s * scale[i] +
                     (bias != nullptr ? bias[i] : 0.0);
    y[i] = from_compute<T>(static_cast<compute_t<T>>(r));
  }
  *mean = m;
  *inv = s;
}

// LayerNormalization-17: statistics over dims [axis, rank); Scale and B broadcast to X. Mean and
// InvStdDev have X's dims with ones from `axis` on, in the stash type (or their declared type).
Status layer_norm(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1}));
  const ir::Tensor& x = *ctx.input(0);
  const ir::Tensor& scale = *ctx.input(1);
  const ir::Tensor* bias = ctx.input(2);
  const ir::Node& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x.rank());
  int64_t axis = node.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.error("axis " + std::to_string(node.attr_int("axis", -1)) +
                     " is out of range for rank " + std::to_string(rank));
  const double eps = node.attr_float("epsilon", 1e-5f);
  const int64_t rows = product(x.dims(), 0, static_cast<size_t>(axis));
  const int64_t cols = product(x.dims(), static_cast<size_t>(axis));
  XOPT_RETURN_IF_ERROR(
      broadcast_to_check(scale.dims(), x.dims()).with_context(node.describe() + ": Scale: "));
  if (bias != nullptr)
    XOPT_RETURN_IF_ERROR(
        broadcast_to_check(bias->dims(), x.dims()).with_context(node.describe() + ": B: "));
  std::vector<double> mean(rows), inv(rows);
  const std::vector<double> sv = to_doubles(scale);
  const std::vector<double> bv = bias != nullptr ? to_doubles(*bias) : std::vector<double>{0.0};
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x.dtype(), x.dims()));
  const auto a = static_cast<size_t>(axis);
  if (is_row_shaped(scale.dims(), x.dims(), a) &&
      (bias == nullptr || is_row_shaped(bias->dims(), x.dims(), a))) {
    // Scale and B hold one value per column: rows are independent, split across the threads.
    XOPT_RETURN_IF_ERROR(dispatch_float(x.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xd = x.data<T>();
      T* yd = yt->mutable_data<T>();
      parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cols)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t r = lo; r < hi; ++r)
                       normalize_row(xd + r * cols, cols, eps, sv.data(),
                                     bias != nullptr ? bv.data() : nullptr, yd + r * cols, &mean[r],
                                     &inv[r]);
                   });
      return Status::ok();
    }));
  } else {
    const std::vector<double> xv = to_doubles(x);
    std::vector<double> y(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      const double* xs = xv.data() + r * cols;
      double m = 0.0, v = 0.0;
      for (int64_t i = 0; i < cols; ++i) m += xs[i];
      m /= static_cast<double>(cols);
      for (int64_t i = 0; i < cols; ++i) v += (xs[i] - m) * (xs[i] - m);
      v /= static_cast<double>(cols);
      mean[r] = m;
      inv[r] = 1.0 / std::sqrt(v + eps);
    }
    const std::vector<int64_t> b_dims = bias != nullptr ? bias->dims() : std::vector<int64_t>{};
    for_each_broadcast(
        x.dims(), {x.dims(), scale.dims(), b_dims}, [&](int64_t i, const int64_t* off) {
          const int64_t r = i / cols;
          y[i] = (xv[i] - mean[r]) * inv[r] * sv[off[1]] + bv[bias != nullptr ? off[2] : 0];
        });
    XOPT_RETURN_IF_ERROR(store(y, yt));
  }
  std::vector<int64_t> stat_dims = x.dims();
  for (int64_t d = axis; d < rank; ++d) stat_dims[d] = 1;
  ir::DType stash = static_cast<ir::DType>(node.attr_int("stash_type", 1));
  if (!ir::is_float(stash)) return ctx.error("stash_type must be a float type");
  for (size_t i = 1; i <= 2 && i < ctx.num_outputs(); ++i) {
    if (!ctx.wants_output(i)) continue;
    ir::DType dt =
        node.output(i)->dtype() != ir::DType::kUndefined ? node.output(i)->dtype() : stash;
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output(i, dt, stat_dims));
    XOPT_RETURN_IF_ERROR(store(i == 1 ? mean : inv, o));
  }
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "BatchNormalization", 1, kLatestOpset, batch_norm);
XOPT_CPU_KERNEL("", "InstanceNormalization", 1, kLatestOpset, instance_norm);
XOPT_CPU_KERNEL("", "LayerNormalization", 17, kLatestOpset, layer_norm);

}  // namespace xopt::exec::nn
