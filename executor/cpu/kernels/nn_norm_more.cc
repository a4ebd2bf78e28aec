// More normalizations: RMSNormalization, GroupNormalization, LpNormalization and
// MeanVarianceNormalization. Statistics in double; results rounded once to the element type.
#include <algorithm>
#include <cmath>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

Result<int64_t> axis_of(const KernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// RMSNormalization: y = x / sqrt(mean(x^2 over axis..end) + epsilon) * scale (scale broadcasts to
// the normalized dims).
Status rms_norm(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* scale = ctx.input(1);
  if (x == nullptr || scale == nullptr) return ctx.error("X and scale are required");
  const int64_t rank = static_cast<int64_t>(x->rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, axis_of(ctx, ctx.node().attr_int("axis", -1), rank));
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const std::vector<int64_t>& dims = x->dims();
  const int64_t outer = prod(dims, 0, static_cast<size_t>(axis));
  const int64_t inner = prod(dims, static_cast<size_t>(axis));
  if (!broadcasts_to(scale->dims(), dims))
    return ctx.error("scale " + ir::dims_string(scale->dims()) + " does not broadcast to X " +
                     ir::dims_string(dims));
  const std::vector<double> xv = doubles(*x);
  const std::vector<double> sv = doubles(*scale);
  const auto soff = broadcast_offsets(scale->dims(), dims);
  std::vector<double> y(xv.size());
  for (int64_t o = 0; o < outer; ++o) {
    const double* xs = xv.data() + o * inner;
    double ms = 0.0;
    for (int64_t i = 0; i < inner; ++i) ms += xs[i] * xs[i];
    ms /= static_cast<double>(inner);
    const double inv = 1.0 / std::sqrt(ms + eps);
    for (int64_t i = 0; i < inner; ++i) {
      const auto at = static_cast<size_t>(o * inner + i);
      y[at] = xs[i] * inv * sv[static_cast<size_t>(soff[at])];
    }
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), dims));
  return store(y, yt);
}

// GroupNormalization: channels split into num_groups groups; statistics per (n, group) over the
// group's channels and the spatial dims. scale and bias are per group at opset 18, per channel
// from 21.
Status group_norm(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* scale = ctx.input(1);
  const ir::Tensor* bias = ctx.input(2);
  if (x == nullptr || scale == nullptr || bias == nullptr)
    return ctx.error("X, scale and bias are required");
  if (x->rank() < 2) return ctx.error("X must have rank >= 2");
  const int64_t groups = ctx.node().attr_int("num_groups", 0);
  const int64_t n = x->dims()[0], c = x->dims()[1], sp = prod(x->dims(), 2);
  if (groups <= 0 || c % groups != 0)
    return ctx.error("num_groups " + std::to_string(groups) +
                     " does not divide C = " + std::to_string(c));
  const bool per_channel = ctx.opset() >= 21;
  const int64_t want = per_channel ? c : groups;
  if (scale->numel() != want || bias->numel() != want)
    return ctx.error("scale and bias must have " + std::to_string(want) + " elements");
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const std::vector<double> xv = doubles(*x), sv = doubles(*scale), bv = doubles(*bias);
  std::vector<double> y(xv.size());
  const int64_t cg = c / groups, len = cg * sp;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (b * c + g * cg) * sp;
      double mean = 0.0, var = 0.0;
      for (int64_t i = 0; i < len; ++i) mean += xv[static_cast<size_t>(base + i)];
      mean /= static_cast<double>(len);
      for (int64_t i = 0; i < len; ++i) {
        const double dlt = xv[static_cast<size_t>(base + i)] - mean;
        var += dlt * dlt;
      }
      var /= static_cast<double>(len);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < len; ++i) {
        const auto ch = static_cast<size_t>(per_channel ? g * cg + i / sp : g);
        const auto at = static_cast<size_t>(base + i);
        y[at] = (xv[at] - mean) * inv * sv[ch] + bv[ch];
      }
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), x->dims()));
  return store(y, yt);
}

// LpNormalization: x / ||x||_p along axis (p = 1 or 2); a zero norm gives 0.
Status lp_norm(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const int64_t rank = static_cast<int64_t>(x->rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, axis_of(ctx, ctx.node().attr_int("axis", -1), rank));
  const int64_t p = ctx.node().attr_int("p", 2);
  if (p != 1 && p != 2) return ctx.error("p must be 1 or 2, got " + std::to_string(p));
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = prod(x->dims(), 0, a), len = x->dims()[a], inner = prod(x->dims(), a + 1);
  const std::vector<double> xv = doubles(*x);
  std::vector<double> y(xv.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double norm = 0.0;
      for (int64_t k = 0; k < len; ++k) {
        const double v = xv[static_cast<size_t>((o * len + k) * inner + i)];
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < len; ++k) {
        const auto at = static_cast<size_t>((o * len + k) * inner + i);
        y[at] = norm == 0.0 ? 0.0 : xv[at] / norm;
      }
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), x->dims()));
  return store(y, yt);
}

// MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default
// [0, 2, 3]), as the op's function body computes it.
Status mvn(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const int64_t rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> axes = ctx.node().attr_ints("axes", {0, 2, 3});
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t ax : axes) {
    XOPT_ASSIGN_OR_RETURN(int64_t a, axis_of(ctx, ax, rank));
    reduced[static_cast<size_t>(a)] = true;
  }
  const std::vector<int64_t>& dims = x->dims();
  std::vector<int64_t> kept = dims;
  for (size_t i = 0; i < kept.size(); ++i)
    if (reduced[i]) kept[i] = 1;
  const auto off = broadcast_offsets(kept, dims);  // element -> its group
  const int64_t groups = prod(kept);
  const std::vector<double> xv = doubles(*x);
  std::vector<double> s1(static_cast<size_t>(groups), 0.0), s2(s1.size(), 0.0), cnt(s1.size(), 0.0);
  for (size_t i = 0; i < xv.size(); ++i) {
    const auto g = static_cast<size_t>(off[i]);
    s1[g] += xv[i];
    s2[g] += xv[i] * xv[i];
    cnt[g] += 1.0;
  }
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const auto g = static_cast<size_t>(off[i]);
    const double mean = s1[g] / cnt[g];
    const double var = std::max(0.0, s2[g] / cnt[g] - mean * mean);
    y[i] = (xv[i] - mean) / (std::sqrt(var) + 1e-9);
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), dims));
  return store(y, yt);
}

}  // namespace

XOPT_CPU_KERNEL("", "RMSNormalization", 23, kLatest, rms_norm);
XOPT_CPU_KERNEL("", "GroupNormalization", 18, kLatest, group_norm);
XOPT_CPU_KERNEL("", "LpNormalization", 1, kLatest, lp_norm);
XOPT_CPU_KERNEL("", "MeanVarianceNormalization", 9, kLatest, mvn);

}  // namespace xopt::exec::ops
