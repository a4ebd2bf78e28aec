// Pooling: AveragePool, MaxPool (with Indices), LpPool, GlobalAveragePool, GlobalMaxPool,
// GlobalLpPool, and LRN. Windows are N-D; every output position walks the cartesian product of its
// per-dim taps.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "executor/cpu/kernels/nn_util.h"
#include "executor/cpu/parallel.h"

namespace xopt::exec::nn {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// Per spatial dim and output index: the input indices the window reads, and how many window
// positions lie inside the explicitly padded input (the divisor with count_include_pad=1).
struct Taps {
  std::vector<std::vector<std::vector<int64_t>>> idx;  // [dim][out] -> input indices
  std::vector<std::vector<int64_t>> padded_count;      // [dim][out]
};

Taps make_taps(const Window& w) {
  const size_t r = w.rank();
  Taps t;
  t.idx.resize(r);
  t.padded_count.resize(r);
  for (size_t d = 0; d < r; ++d) {
    t.idx[d].resize(static_cast<size_t>(w.out[d]));
    t.padded_count[d].resize(static_cast<size_t>(w.out[d]));
    for (int64_t o = 0; o < w.out[d]; ++o) {
      const int64_t start = o * w.strides[d] - w.pads[d];
      int64_t padded = 0;
      for (int64_t j = 0; j < w.kernel[d]; ++j) {
        const int64_t i = start + j * w.dilations[d];
        if (i < w.in[d] + w.pads[d + r]) ++padded;
        if (i >= 0 && i < w.in[d]) t.idx[d][o].push_back(i);
      }
      t.padded_count[d][o] = padded;
    }
  }
  return t;
}

struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;
  double p = 2.0;
  bool col_major = false;  // MaxPool storage_order=1 for Indices
};

// Along one spatial dim, for every output index: the window taps [lo, hi) that read inside the
// input, and how many taps lie before the end padding (the count_include_pad divisor).
struct DimTaps {
  std::vector<int64_t> lo, hi, padded;
};

DimTaps dim_taps(int64_t out, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad,
                 int64_t end_pad) {
  DimTaps t;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad;  // input index of tap 0
    // Smallest tap count n with start + n * dil >= limit (limit - start > 0), capped at k.
    auto taps_below = [&](int64_t limit) {
      return limit <= start ? int64_t{0} : std::min(k, (limit - start + dil - 1) / dil);
    };
    const int64_t lo = std::min(k, taps_below(0)), hi = std::max(lo, taps_below(in));
    t.lo.push_back(lo);
    t.hi.push_back(hi);
    t.padded.push_back(taps_below(in + end_pad));
  }
  return t;
}

// 2-D max / average pooling without Indices: the common CNN case, done with direct loops over the
// taps inside the input (in the same order as the general path, so the same sums).
template <typename T>
void pool_2d(const Window& w, const PoolParams& pp, int64_t nc, const T* x, T* y) {
  using C = compute_t<T>;
  const int64_t ih = w.in[0], iw = w.in[1], oh = w.out[0], ow = w.out[1];
  const int64_t dh = w.dilations[0], dw = w.dilations[1];
  const DimTaps th = dim_taps(oh, ih, w.kernel[0], w.strides[0], dh, w.pads[0], w.pads[2]);
  const DimTaps tw = dim_taps(ow, iw, w.kernel[1], w.strides[1], dw, w.pads[1], w.pads[3]);
  const int64_t sh = w.strides[0], sw = w.strides[1], ph = w.pads[0], pw = w.pads[1];
  for (int64_t s = 0; s < nc; ++s) {
    const T* xs = x + s * ih * iw;
    T* ys = y + s * oh * ow;
    for (int64_t i = 0; i < oh; ++i) {
      const int64_t h0 = i * sh - ph;
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t w0 = j * sw - pw;
        C best = std::numeric_limits<C>::lowest();
        double acc = 0.0;
        bool first = true;
        for (int64_t a = th.lo[i]; a < th.hi[i]; ++a) {
          const T* row = xs + (h0 + a * dh) * iw + w0;
          for (int64_t b = tw.lo[j]; b < tw.hi[j]; ++b) {
            const C v = to_compute(row[b * dw]);
            if (pp.kind == PoolKind::kMax) {
              if (first || v > best) best = v;
              first = false;
            } else {
              acc += static_cast<double>(v);
            }
          }
        }
        if (pp.kind == PoolKind::kMax) {
          ys[i * ow + j] = from_compute<T>(best);
        } else {
          const int64_t count = (th.hi[i] - th.lo[i]) * (tw.hi[j] - tw.lo[j]);
          const int64_t div = pp.count_include_pad ? th.padded[i] * tw.padded[j] : count;
          ys[i * ow + j] = from_compute<T>(static_cast<C>(acc / static_cast<double>(div)));
        }
      }
    }
  }
}

// Pools one tensor. `indices` (MaxPool only) receives flat input indices when not null.
template <typename T>
void pool(const Window& w, const PoolParams& pp, int64_t nc, const T* x, T* y, int64_t* indices) {
  using C = compute_t<T>;
  if (w.rank() == 2 && indices == nullptr && pp.kind != PoolKind::kLp) {
    pool_2d(w, pp, nc, x, y);
    return;
  }
  const size_t r = w.rank();
  const Taps taps = make_taps(w);
  const int64_t in_size = product(w.in), out_size = product(w.out);
  std::vector<int64_t> in_stride(r, 1), cm_stride(r, 1);  // row-major and column-major strides
  for (size_t d = r - 1; d-- > 0;) in_stride[d] = in_stride[d + 1] * w.in[d + 1];
  for (size_t d = 1; d < r; ++d) cm_stride[d] = cm_stride[d - 1] * w.in[d - 1];
  std::vector<int64_t> oidx(r), tidx(r);
  for (int64_t s = 0; s < nc; ++s) {
    const T* xs = x + s * in_size;
    std::fill(oidx.begin(), oidx.end(), 0);
    for (int64_t o = 0; o < out_size; ++o) {
      // Window: the cartesian product of taps.idx[d][oidx[d]].
      int64_t count = 1, padded = 1;
      for (size_t d = 0; d < r; ++d) {
        count *= static_cast<int64_t>(taps.idx[d][oidx[d]].size());
        padded *= taps.padded_count[d][oidx[d]];
      }
      double acc = 0.0;
      C best = std::numeric_limits<C>::lowest();
      int64_t best_at = -1;
      if (count > 0) {
        std::fill(tidx.begin(), tidx.end(), 0);
        for (int64_t t = 0; t < count; ++t) {
          int64_t off = 0;
          for (size_t d = 0; d < r; ++d) off += taps.idx[d][oidx[d]][tidx[d]] * in_stride[d];
          const C v = to_compute(xs[off]);
          switch (pp.kind) {
            case PoolKind::kMax:
              if (best_at < 0 || v > best) {
                best = v;
                best_at = off;
              }
              break;
            case PoolKind::kAverage:
              acc += static_cast<double>(v);
              break;
            case PoolKind::kLp:
              acc += std::pow(std::abs(static_cast<double>(v)), pp.p);
              break;
          }
          for (size_t d = r; d-- > 0;) {
            if (++tidx[d] < static_cast<int64_t>(taps.idx[d][oidx[d]].size())) break;
            tidx[d] = 0;
          }
        }
      }
      switch (pp.kind) {
        case PoolKind::kMax:
          y[s * out_size + o] = from_compute<T>(best);
          if (indices != nullptr) {
            int64_t flat = best_at;
            if (pp.col_major && best_at >= 0) {
              flat = 0;
              int64_t rest = best_at;
              for (size_t d = 0; d < r; ++d) {
                flat += (rest / in_stride[d]) * cm_stride[d];
                rest %= in_stride[d];
              }
            }
            indices[s * out_size + o] = s * in_size + flat;
          }
          break;
        case PoolKind::kAverage: {
          const int64_t div = pp.count_include_pad ? padded : count;
          y[s * out_size + o] = from_compute<T>(static_cast<C>(acc / static_cast<double>(div)));
          break;
        }
        case PoolKind::kLp:
          y[s * out_size + o] = from_compute<T>(static_cast<C>(std::pow(acc, 1.0 / pp.p)));
          break;
      }
      for (size_t d = r; d-- > 0;) {
        if (++oidx[d] < w.out[d]) break;
        oidx[d] = 0;
      }
    }
  }
}

Status run_pool(KernelContext& ctx, PoolKind kind) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0}));
  const ir::Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  const int64_t opset = ctx.opset();
  if (!node.has_attr("kernel_shape")) return ctx.error("kernel_shape attribute is required");
  // dilations exist from MaxPool-10, AveragePool-19 and LpPool-18; ceil_mode from 10 (LpPool 18).
  bool dil = kind == PoolKind::kMax       ? opset >= 10
             : kind == PoolKind::kAverage ? opset >= 19
                                          : opset >= 18;
  const bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  XOPT_ASSIGN_OR_RETURN(Window w, make_window(ctx, x.dims(), {}, ceil_mode, dil));
  PoolParams pp;
  pp.kind = kind;
  pp.count_include_pad = node.attr_int("count_include_pad", 0) != 0;
  pp.p = static_cast<double>(node.attr_int("p", 2));
  pp.col_major = node.attr_int("storage_order", 0) != 0;
  std::vector<int64_t> y_dims = {x.dims()[0], x.dims()[1]};
  y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x.dtype(), y_dims));
  int64_t* indices = nullptr;
  if (kind == PoolKind::kMax && ctx.wants_output(1)) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * ind, ctx.output(1, ir::DType::kInt64, y_dims));
    indices = ind->mutable_data<int64_t>();
  }
  const int64_t nc = x.dims()[0] * x.dims()[1];
  const int64_t in_size = product(w.in), out_size = product(w.out);
  // Channels are independent: split them across the intra-op threads (Indices count from the first
  // channel, so that case stays on one thread).
  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* yd = y->mutable_data<T>();
    if (indices != nullptr) {
      pool<T>(w, pp, nc, xd, yd, indices);
      return Status::ok();
    }
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, in_size + out_size));
    parallel_for(nc, grain, [&](int64_t lo, int64_t hi) {
      pool<T>(w, pp, hi - lo, xd + lo * in_size, yd + lo * out_size, nullptr);
    });
    return Status::ok();
  };
  if (kind == PoolKind::kMax) return dispatch_numeric(x.dtype(), run);
  return dispatch_float(x.dtype(), run);
}

Status max_pool(KernelContext& ctx) {
  return run_pool(ctx, PoolKind::kMax);
}
Status average_pool(KernelContext& ctx) {
  return run_pool(ctx, PoolKind::kAverage);
}
Status lp_pool(KernelContext& ctx) {
  return run_pool(ctx, PoolKind::kLp);
}

// Global pools reduce every spatial dim to 1.
Status run_global_pool(KernelContext& ctx, PoolKind kind) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0}));
  const ir::Tensor& x = *ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2 ([N, C, spatial...])");
  std::vector<int64_t> y_dims = x.dims();
  for (size_t i = 2; i < y_dims.size(); ++i) y_dims[i] = 1;
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x.dtype(), y_dims));
  const int64_t nc = x.dims()[0] * x.dims()[1];
  const int64_t size = product(x.dims(), 2);
  const double p = static_cast<double>(ctx.node().attr_int("p", 2));
  return dispatch_float(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* xd = x.data<T>();
    T* yd = y->mutable_data<T>();
    parallel_for(nc, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, size)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t s = lo; s < hi; ++s) {
                     const T* xs = xd + s * size;
                     if (kind == PoolKind::kMax) {
                       C best = std::numeric_limits<C>::lowest();
                       for (int64_t i = 0; i < size; ++i)
                         best = std::max(best, static_cast<C>(to_compute(xs[i])));
                       yd[s] = from_compute<T>(best);
                     } else if (kind == PoolKind::kAverage) {
                       double acc = 0.0;
                       for (int64_t i = 0; i < size; ++i)
                         acc += static_cast<double>(to_compute(xs[i]));
                       yd[s] = from_compute<T>(static_cast<C>(acc / static_cast<double>(size)));
                     } else {
                       double acc = 0.0;
                       for (int64_t i = 0; i < size; ++i)
                         acc += std::pow(std::abs(static_cast<double>(to_compute(xs[i]))), p);
                       yd[s] = from_compute<T>(static_cast<C>(std::pow(acc, 1.0 / p)));
                     }
                   }
                 });
    return Status::ok();
  });
}

Status global_max_pool(KernelContext& ctx) {
  return run_global_pool(ctx, PoolKind::kMax);
}
Status global_average_pool(KernelContext& ctx) {
  return run_global_pool(ctx, PoolKind::kAverage);
}
Status global_lp_pool(KernelContext& ctx) {
  return run_global_pool(ctx, PoolKind::kLp);
}

// LRN: y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta.
Status lrn(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0}));
  const ir::Tensor& x = *ctx.input(0);
  const ir::Node& node = ctx.node();
  if (x.rank() < 3) return ctx.error("input must have rank >= 3 ([N, C, spatial...])");
  const int64_t size = node.attr_int("size", 0);
  if (size < 1) return ctx.error("attribute size must be a positive integer");
  const double alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f),
               bias = node.attr_float("bias", 1.0f);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x.dtype(), x.dims()));
  const int64_t n = x.dims()[0], c = x.dims()[1], sp = product(x.dims(), 2);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor / ceil of (size-1)/2
  return dispatch_float(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* yd = y->mutable_data<T>();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < sp; ++i) {
          double sq = 0.0;
          for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after);
               ++k) {
            const double v = static_cast<double>(to_compute(xd[(b * c + k) * sp + i]));
            sq += v * v;
          }
          const int64_t at = (b * c + ch) * sp + i;
          const double v = static_cast<double>(to_compute(xd[at]));
          yd[at] = from_compute<T>(
              static_cast<compute_t<T>>(v / std::pow(bias + alpha / size * sq, beta)));
        }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "MaxPool", 1, kLatestOpset, max_pool);
XOPT_CPU_KERNEL("", "AveragePool", 1, kLatestOpset, average_pool);
XOPT_CPU_KERNEL("", "LpPool", 1, kLatestOpset, lp_pool);
XOPT_CPU_KERNEL("", "GlobalMaxPool", 1, kLatestOpset, global_max_pool);
XOPT_CPU_KERNEL("", "GlobalAveragePool", 1, kLatestOpset, global_average_pool);
XOPT_CPU_KERNEL("", "GlobalLpPool", 2, kLatestOpset, global_lp_pool);
XOPT_CPU_KERNEL("", "LRN", 1, kLatestOpset, lrn);

}  // namespace xopt::exec::nn
