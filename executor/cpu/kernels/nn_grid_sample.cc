// GridSample (16, 20, 22: 2-D at 16, N-D from 20; modes bilinear/linear, bicubic/cubic, nearest;
// padding zeros / border / reflection; align_corners) and AffineGrid (2-D and 3-D), following
// the ONNX reference implementation (cubic with border or reflection padding: onnxruntime's).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

enum class Pad { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] by its nearest border, repeatedly.
double reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (x < lo) {
    const double dx = lo - x;
    const auto n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const auto n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double x, double c[4]) {
  constexpr double a = -0.75;
  x = std::fabs(x);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

Status grid_sample(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* grid = ctx.input(1);
  if (x == nullptr || grid == nullptr) return ctx.error("X and grid are required");
  const size_t r = x->rank() - 2;
  if (x->rank() < 3 || grid->rank() != x->rank() ||
      grid->dims().back() != static_cast<int64_t>(r) || grid->dims()[0] != x->dims()[0])
    return ctx.error("X " + ir::dims_string(x->dims()) + " and grid " +
                     ir::dims_string(grid->dims()) + " must be [N, C, D1..Dr] and [N, O1..Or, r]");
  if (ctx.opset() < 20 && r != 2) return ctx.error("GridSample before opset 20 is 2-D only");
  std::string mode = ctx.node().attr_string("mode", ctx.opset() < 20 ? "bilinear" : "linear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode != "linear" && mode != "cubic" && mode != "nearest")
    return ctx.error("unknown mode '" + mode + "'");
  const std::string pm = ctx.node().attr_string("padding_mode", "zeros");
  const Pad pad = pm == "zeros" ? Pad::kZeros : pm == "border" ? Pad::kBorder : Pad::kReflection;
  if (pm != "zeros" && pm != "border" && pm != "reflection")
    return ctx.error("unknown padding_mode '" + pm + "'");
  const bool align = ctx.node().attr_int("align_corners", 0) != 0;
  const int64_t n = x->dims()[0], c = x->dims()[1];
  const std::vector<int64_t> in(x->dims().begin() + 2, x->dims().end());
  const std::vector<int64_t> outs(grid->dims().begin() + 1, grid->dims().end() - 1);
  const int64_t in_sz = prod(in), out_sz = prod(outs);
  std::vector<double> lo(r), hi(r);
  for (size_t i = 0; i < r; ++i) {
    lo[i] = align ? 0.0 : -0.5;
    hi[i] = align ? static_cast<double>(in[i] - 1) : static_cast<double>(in[i]) - 0.5;
  }
  const auto ist = row_strides(in);
  const std::vector<double> xv = doubles(*x), gv = doubles(*grid);
  std::vector<double> y(static_cast<size_t>(n * c * out_sz), 0.0);
  // Per dim, the taps (index, weight) of one coordinate.
  std::vector<std::vector<std::pair<int64_t, double>>> taps(r);
  std::vector<double> coord(r);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < out_sz; ++o) {
      const double* g = gv.data() + (b * out_sz + o) * static_cast<int64_t>(r);
      for (size_t i = 0; i < r; ++i) {
        const double v = g[r - 1 - i];  // the grid holds (x, y, z): the last dim first
        const auto len = static_cast<double>(in[i]);
        double p = align ? (v + 1) / 2.0 * (len - 1) : ((v + 1) * len - 1) / 2.0;
        p = static_cast<double>(static_cast<float>(p));
        if (mode == "nearest") p = std::nearbyint(p);
        // Linear and nearest move an outside coordinate in by the padding mode first (the
        // reference's order); cubic leaves it and pads each tap, as onnxruntime and PyTorch do
        // (the reference differs there; no node test covers cubic with border or reflection).
        if ((p < lo[i] || p > hi[i]) && mode != "cubic") {
          if (pad == Pad::kBorder) p = std::min(std::max(p, 0.0), len - 1);
          if (pad == Pad::kReflection) p = reflect(p, lo[i], hi[i]);
        }
        coord[i] = p;
        taps[i].clear();
        if (mode == "nearest") {
          taps[i].push_back({static_cast<int64_t>(p), 1.0});
        } else if (mode == "linear") {
          const auto x0 = static_cast<int64_t>(std::floor(p));
          const double t = std::fabs(p - static_cast<double>(x0));
          taps[i].push_back({x0, 1 - t});
          taps[i].push_back({x0 + 1, t});
        } else {
          const auto x0 = static_cast<int64_t>(std::floor(p));
          double cf[4];
          cubic_coeffs(p - static_cast<double>(x0), cf);
          for (int k = 0; k < 4; ++k) taps[i].push_back({x0 - 1 + k, cf[k]});
        }
      }
      // Every combination of taps: the pixel (with padding) times the product of weights.
      std::vector<size_t> pick(r, 0);
      std::vector<std::pair<int64_t, double>> terms;  // (offset or -1 for zero, weight)
      while (true) {
        double w = 1.0;
        int64_t off = 0;
        bool zero = false;
        for (size_t i = 0; i < r; ++i) {
          int64_t idx = taps[i][pick[i]].first;
          w *= taps[i][pick[i]].second;
          const int64_t d = in[i];
          if (idx < 0 || idx >= d) {
            if (pad == Pad::kZeros) zero = true;
            if (pad == Pad::kBorder) idx = std::min<int64_t>(std::max<int64_t>(idx, 0), d - 1);
            if (pad == Pad::kReflection)
              idx = static_cast<int64_t>(reflect(static_cast<double>(idx), lo[i], hi[i]));
          }
          off += idx * ist[i];
        }
        terms.push_back({zero ? -1 : off, w});
        size_t i = r;
        while (i-- > 0) {
          if (++pick[i] < taps[i].size()) break;
          pick[i] = 0;
        }
        if (i == static_cast<size_t>(-1)) break;
      }
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* src = xv.data() + (b * c + ch) * in_sz;
        double acc = 0.0;
        for (const auto& [off, w] : terms)
          if (off >= 0) acc += src[off] * w;
        y[static_cast<size_t>((b * c + ch) * out_sz + o)] = acc;
      }
    }
  std::vector<int64_t> odims = {n, c};
  odims.insert(odims.end(), outs.begin(), outs.end());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), odims));
  return store(y, yt);
}

// AffineGrid(theta [N, 2, 3] or [N, 3, 4], size (N, C, H, W) or (N, C, D, H, W)): the base grid
// of normalized coordinates (x fastest, then y, z; homogeneous 1 last) transformed by theta.
Status affine_grid(KernelContext& ctx) {
  const ir::Tensor* theta = ctx.input(0);
  const ir::Tensor* size_t_ = ctx.input(1);
  if (theta == nullptr || size_t_ == nullptr) return ctx.error("theta and size are required");
  const std::vector<int64_t> size = size_t_->to_int64_vector();
  if (size.size() != 4 && size.size() != 5) return ctx.error("size must have 4 or 5 elements");
  const size_t r = size.size() - 2;
  const int64_t n = size[0];
  if (theta->rank() != 3 || theta->dims()[0] != n || theta->dims()[1] != static_cast<int64_t>(r) ||
      theta->dims()[2] != static_cast<int64_t>(r + 1))
    return ctx.error("theta " + ir::dims_string(theta->dims()) + " does not match size");
  const bool align = ctx.node().attr_int("align_corners", 0) != 0;
  const std::vector<int64_t> sp(size.begin() + 2, size.end());
  auto base = [&](int64_t i, int64_t len) {
    if (align)
      return len == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len);
  };
  const int64_t pts = prod(sp);
  const std::vector<double> tv = doubles(*theta);
  std::vector<double> y(static_cast<size_t>(n * pts * static_cast<int64_t>(r)));
  std::vector<double> h(r + 1);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < pts; ++p) {
      int64_t rem = p;
      // Spatial index (d, h, w) -> homogeneous (x = w, y = h, z = d, 1).
      for (size_t i = r; i-- > 0;) {
        const int64_t len = sp[i];
        h[r - 1 - i] = base(rem % len, len);
        rem /= len;
      }
      h[r] = 1.0;
      for (size_t k = 0; k < r; ++k) {
        double acc = 0.0;
        for (size_t j = 0; j <= r; ++j)
          acc += tv[static_cast<size_t>((b * static_cast<int64_t>(r) + static_cast<int64_t>(k)) *
                                            static_cast<int64_t>(r + 1) +
                                        static_cast<int64_t>(j))] *
                 h[j];
        y[static_cast<size_t>((b * pts + p) * static_cast<int64_t>(r)) + k] = acc;
      }
    }
  std::vector<int64_t> odims = {n};
  odims.insert(odims.end(), sp.begin(), sp.end());
  odims.push_back(static_cast<int64_t>(r));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, theta->dtype(), odims));
  return store(y, yt);
}

}  // namespace

XOPT_CPU_KERNEL("", "GridSample", 16, kLatest, grid_sample);
XOPT_CPU_KERNEL("", "AffineGrid", 20, kLatest, affine_grid);

}  // namespace xopt::exec::ops
