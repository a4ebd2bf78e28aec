// Signal processing: DFT (17, 20), STFT, HannWindow / HammingWindow / BlackmanWindow and
// MelWeightMatrix, as the ONNX reference computes them. Transforms are direct O(n^2) sums in
// double (sizes in models are small: audio frames of a few hundred samples).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

constexpr double kPi = std::numbers::pi;

// One DFT of `n` points of complex input `re/im` (m given points, zero-padded or truncated).
// Forward: X[k] = sum x[t] e^{-2 pi i k t / n}; inverse: (1/n) sum X[t] e^{+2 pi i k t / n}.
void dft1(const std::vector<double>& re, const std::vector<double>& im, int64_t n, bool inverse,
          int64_t out_len, std::vector<double>& ore, std::vector<double>& oim) {
  const auto m = static_cast<int64_t>(re.size());
  const int64_t used = std::min(m, n);
  ore.assign(static_cast<size_t>(out_len), 0.0);
  oim.assign(static_cast<size_t>(out_len), 0.0);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < out_len; ++k) {
    double sr = 0.0, si = 0.0;
    for (int64_t t = 0; t < used; ++t) {
      const double ang =
          sign * 2.0 * kPi * static_cast<double>((k * t) % n) / static_cast<double>(n);
      const double c = std::cos(ang), s = std::sin(ang);
      sr += re[static_cast<size_t>(t)] * c - im[static_cast<size_t>(t)] * s;
      si += re[static_cast<size_t>(t)] * s + im[static_cast<size_t>(t)] * c;
    }
    if (inverse) {
      sr /= static_cast<double>(n);
      si /= static_cast<double>(n);
    }
    ore[static_cast<size_t>(k)] = sr;
    oim[static_cast<size_t>(k)] = si;
  }
}

// numpy's irfft of `n` points from the one-sided spectrum re/im (the first n/2 + 1 bins used).
void irfft1(const std::vector<double>& re, const std::vector<double>& im, int64_t n,
            std::vector<double>& out) {
  const int64_t half = n / 2 + 1;
  auto bin = [&](int64_t k, bool imag) {
    if (k >= static_cast<int64_t>(re.size())) return 0.0;
    return imag ? im[static_cast<size_t>(k)] : re[static_cast<size_t>(k)];
  };
  out.assign(static_cast<size_t>(n), 0.0);
  for (int64_t t = 0; t < n; ++t) {
    double s = bin(0, false);
    for (int64_t k = 1; k < half; ++k) {
      const double ang = 2.0 * kPi * static_cast<double>((k * t) % n) / static_cast<double>(n);
      const double c = std::cos(ang), sn = std::sin(ang);
      const double term = bin(k, false) * c - bin(k, true) * sn;
      // The Nyquist bin (even n) counts once; its imaginary part meets sin(pi t) = 0.
      s += (n % 2 == 0 && k == n / 2) ? term : 2.0 * term;
    }
    out[static_cast<size_t>(t)] = s / static_cast<double>(n);
  }
}

Status dft(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const auto r = static_cast<int64_t>(x->rank());
  if (r < 2) return ctx.error("input must have rank >= 2");
  const int64_t comps = x->dims().back();
  if (comps != 1 && comps != 2) return ctx.error("the last dim must be 1 (real) or 2 (complex)");
  int64_t axis = ctx.opset() >= 20 ? -2 : ctx.node().attr_int("axis", 1);
  if (ctx.opset() >= 20 && ctx.input(2) != nullptr) axis = ctx.input(2)->as_int64(0);
  axis = ((axis % r) + r) % r;
  if (axis == r - 1) return ctx.error("axis must not be the last dim");
  const bool inverse = ctx.node().attr_int("inverse", 0) != 0;
  const bool onesided = ctx.node().attr_int("onesided", 0) != 0;
  const auto a = static_cast<size_t>(axis);
  const int64_t m = x->dims()[a];
  int64_t n = inverse && onesided ? 2 * (m - 1) : m;
  if (ctx.input(1) != nullptr) n = ctx.input(1)->as_int64(0);
  if (n < 1) return ctx.error("dft_length must be positive");
  const int64_t out_len = inverse ? n : (onesided ? n / 2 + 1 : n);
  const int64_t out_comps = inverse && onesided ? 1 : 2;
  const int64_t outer = prod(x->dims(), 0, a);
  const int64_t inner = prod(x->dims(), a + 1, x->rank() - 1);
  std::vector<int64_t> odims = x->dims();
  odims[a] = out_len;
  odims.back() = out_comps;
  const std::vector<double> xv = doubles(*x);
  std::vector<double> y(static_cast<size_t>(outer * out_len * inner * out_comps));
  std::vector<double> re(static_cast<size_t>(m)), im(static_cast<size_t>(m)), ore, oim, real;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < m; ++t) {
        const int64_t at = ((o * m + t) * inner + i) * comps;
        re[static_cast<size_t>(t)] = xv[static_cast<size_t>(at)];
        im[static_cast<size_t>(t)] = comps == 2 ? xv[static_cast<size_t>(at + 1)] : 0.0;
      }
      if (inverse && onesided) {
        irfft1(re, im, n, real);
        for (int64_t k = 0; k < out_len; ++k)
          y[static_cast<size_t>((o * out_len + k) * inner + i)] = real[static_cast<size_t>(k)];
        continue;
      }
      dft1(re, im, n, inverse, out_len, ore, oim);
      for (int64_t k = 0; k < out_len; ++k) {
        const int64_t at = ((o * out_len + k) * inner + i) * 2;
        y[static_cast<size_t>(at)] = ore[static_cast<size_t>(k)];
        y[static_cast<size_t>(at + 1)] = oim[static_cast<size_t>(k)];
      }
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), odims));
  return store(y, yt);
}

// STFT: frames of frame_length every frame_step samples, weighted by the window (ones when
// absent), each transformed (onesided by default).
Status stft(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* step_t = ctx.input(1);
  const ir::Tensor* window = ctx.input(2);
  const ir::Tensor* len_t = ctx.input(3);
  if (x == nullptr || step_t == nullptr) return ctx.error("signal and frame_step are required");
  if (x->rank() != 3) return ctx.error("signal must be [batch, length, 1 or 2]");
  const int64_t b = x->dims()[0], len = x->dims()[1], comps = x->dims()[2];
  if (comps != 1 && comps != 2) return ctx.error("the last dim must be 1 or 2");
  const int64_t step = step_t->as_int64(0);
  int64_t fl = len_t != nullptr ? len_t->as_int64(0) : window != nullptr ? window->numel() : len;
  if (step < 1 || fl < 1 || fl > len) return ctx.error("bad frame_step or frame_length");
  std::vector<double> w(static_cast<size_t>(fl), 1.0);
  if (window != nullptr) {
    if (window->numel() != fl) return ctx.error("window length differs from frame_length");
    w = doubles(*window);
  }
  const bool onesided = ctx.node().attr_int("onesided", 1) != 0;
  const int64_t frames = 1 + (len - fl) / step;
  const int64_t bins = onesided ? fl / 2 + 1 : fl;
  const std::vector<double> xv = doubles(*x);
  std::vector<double> y(static_cast<size_t>(b * frames * bins * 2));
  std::vector<double> re(static_cast<size_t>(fl)), im(static_cast<size_t>(fl)), ore, oim;
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < fl; ++t) {
        const int64_t at = (bi * len + f * step + t) * comps;
        re[static_cast<size_t>(t)] = xv[static_cast<size_t>(at)] * w[static_cast<size_t>(t)];
        im[static_cast<size_t>(t)] =
            comps == 2 ? xv[static_cast<size_t>(at + 1)] * w[static_cast<size_t>(t)] : 0.0;
      }
      dft1(re, im, fl, false, bins, ore, oim);
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t at = ((bi * frames + f) * bins + k) * 2;
        y[static_cast<size_t>(at)] = ore[static_cast<size_t>(k)];
        y[static_cast<size_t>(at + 1)] = oim[static_cast<size_t>(k)];
      }
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), {b, frames, bins, 2}));
  return store(y, yt);
}

enum class Window { kHann, kHamming, kBlackman };

Status window(KernelContext& ctx, Window kind) {
  const ir::Tensor* size_t_ = ctx.input(0);
  if (size_t_ == nullptr) return ctx.error("size is required");
  const int64_t n = size_t_->as_int64(0);
  if (n < 0) return ctx.error("size must be non-negative");
  const bool periodic = ctx.node().attr_int("periodic", 1) != 0;
  const auto dt = static_cast<ir::DType>(ctx.node().attr_int("output_datatype", 1));
  const double denom = static_cast<double>(periodic ? n : n - 1);
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(i);
    double r = 0.0;
    switch (kind) {
      case Window::kHann: {
        const double s = std::sin(v * kPi / denom);
        r = s * s;
        break;
      }
      case Window::kHamming:
        r = 25.0 / 46.0 - std::cos(v * kPi * 2 / denom) * (1 - 25.0 / 46.0);
        break;
      case Window::kBlackman:
        r = 0.42 - 0.5 * std::cos(v * kPi * 2 / denom) + 0.08 * std::cos(v * kPi * 4 / denom);
        break;
    }
    y[static_cast<size_t>(i)] = r;
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, dt, {n}));
  return store(y, yt);
}

Status hann(KernelContext& ctx) {
  return window(ctx, Window::kHann);
}
Status hamming(KernelContext& ctx) {
  return window(ctx, Window::kHamming);
}
Status blackman(KernelContext& ctx) {
  return window(ctx, Window::kBlackman);
}

// MelWeightMatrix [dft_length / 2 + 1, num_mel_bins]: triangular filters between mel-spaced
// points (num_mel_bins + 2 of them, the reference's spacing), in the reference's arithmetic (the
// mel edges in the inputs' float type, the rest in double, bins floored).
Status mel_weight_matrix(KernelContext& ctx) {
  for (size_t i = 0; i < 5; ++i)
    if (ctx.input(i) == nullptr) return ctx.error("all five inputs are required");
  const int64_t mels = ctx.input(0)->as_int64(0);
  const int64_t dft_len = ctx.input(1)->as_int64(0);
  const int64_t rate = ctx.input(2)->as_int64(0);
  const ir::Tensor& lo_t = *ctx.input(3);
  const ir::Tensor& hi_t = *ctx.input(4);
  if (mels < 1 || dft_len < 1 || rate < 1) return ctx.error("bad sizes");
  auto to_mel = [](const ir::Tensor& t) {
    const double f = t.as_double(0);
    if (t.dtype() == ir::DType::kFloat) {
      const float v = 2595.0f * std::log1p(static_cast<float>(f) / 700.0f);
      return static_cast<double>(v) / std::log(10.0);
    }
    return 2595.0 * std::log1p(f / 700.0) / std::log(10.0);
  };
  const double lo = to_mel(lo_t), hi = to_mel(hi_t);
  const int64_t npts = mels + 2;
  const double step = (hi - lo) / static_cast<double>(npts);
  std::vector<int64_t> pts(static_cast<size_t>(npts));
  for (int64_t i = 0; i < npts; ++i) {
    double f = static_cast<double>(i) * step + lo;
    f = 700.0 * std::expm1(f / 2595.0 * std::log(10.0));
    pts[static_cast<size_t>(i)] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_len + 1) * f / static_cast<double>(rate)));
  }
  const int64_t bins = dft_len / 2 + 1;
  std::vector<double> y(static_cast<size_t>(bins * mels), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return y[static_cast<size_t>(j * mels + i)]; };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t l = pts[static_cast<size_t>(i)], c = pts[static_cast<size_t>(i + 1)],
                  h = pts[static_cast<size_t>(i + 2)];
    if (c - l == 0) {
      if (c >= 0 && c < bins) at(c, i) = 1.0;
    } else {
      for (int64_t j = l; j <= c; ++j)
        if (j >= 0 && j < bins) at(j, i) = static_cast<double>(j - l) / static_cast<double>(c - l);
    }
    if (h - c > 0)
      for (int64_t j = c; j < h; ++j)
        if (j >= 0 && j < bins) at(j, i) = static_cast<double>(h - j) / static_cast<double>(h - c);
  }
  const auto dt = static_cast<ir::DType>(ctx.node().attr_int("output_datatype", 1));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, dt, {bins, mels}));
  return store(y, yt);
}

}  // namespace

XOPT_CPU_KERNEL("", "DFT", 17, kLatest, dft);
XOPT_CPU_KERNEL("", "STFT", 17, kLatest, stft);
XOPT_CPU_KERNEL("", "HannWindow", 17, kLatest, hann);
XOPT_CPU_KERNEL("", "HammingWindow", 17, kLatest, hamming);
XOPT_CPU_KERNEL("", "BlackmanWindow", 17, kLatest, blackman);
XOPT_CPU_KERNEL("", "MelWeightMatrix", 17, kLatest, mel_weight_matrix);

}  // namespace xopt::exec::ops
