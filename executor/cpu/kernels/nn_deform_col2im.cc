// Sliding-window ops that scatter or sample: DeformConv (2-D; offsets and an optional mask per
// offset group, bilinear sampling with zeros outside), Col2Im (N-D) and MaxUnpool, following the
// ONNX reference implementation.
#include <cmath>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

// Bilinear sample of a [h, w] plane at (y, x); taps outside the plane read 0.
double bilinear(const double* p, int64_t h, int64_t w, double y, double x) {
  const auto y0 = static_cast<int64_t>(std::floor(y));
  const auto x0 = static_cast<int64_t>(std::floor(x));
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  double v = 0.0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t yy = y0 + dy, xx = x0 + dx;
      if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
      v += (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx) * p[yy * w + xx];
    }
  return v;
}

Status deform_conv(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* wt = ctx.input(1);
  const ir::Tensor* off = ctx.input(2);
  const ir::Tensor* bias = ctx.input(3);
  const ir::Tensor* mask = ctx.input(4);
  if (x == nullptr || wt == nullptr || off == nullptr)
    return ctx.error("X, W and offset are required");
  if (x->rank() != 4 || wt->rank() != 4 || off->rank() != 4)
    return ctx.unsupported("only 2-D DeformConv is implemented");
  const ir::Node& node = ctx.node();
  const int64_t n = x->dims()[0], ic = x->dims()[1], ih = x->dims()[2], iw = x->dims()[3];
  const int64_t oc = wt->dims()[0], icg = wt->dims()[1];
  const std::vector<int64_t> ks = node.attr_ints("kernel_shape", {wt->dims()[2], wt->dims()[3]});
  const int64_t kh = ks[0], kw = ks[1];
  const auto st = node.attr_ints("strides", {1, 1});
  const auto dil = node.attr_ints("dilations", {1, 1});
  const auto pads = node.attr_ints("pads", {0, 0, 0, 0});
  const int64_t group = node.attr_int("group", 1), og = node.attr_int("offset_group", 1);
  if (ks.size() != 2 || st.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return ctx.error("kernel_shape/strides/dilations/pads must describe 2 spatial dims");
  if (group < 1 || og < 1 || ic != icg * group || oc % group != 0 || ic % og != 0)
    return ctx.error("channels do not divide into groups / offset groups");
  const int64_t oh = off->dims()[2], ow = off->dims()[3];
  if (off->dims()[0] != n || off->dims()[1] != og * kh * kw * 2)
    return ctx.error("offset must be [N, offset_group * kH * kW * 2, oH, oW]");
  if (oh != (ih + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / st[0] + 1 ||
      ow != (iw + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / st[1] + 1)
    return ctx.error("offset's spatial dims do not match the convolution's output");
  if (mask != nullptr && (mask->numel() != n * og * kh * kw * oh * ow || mask->dims()[0] != n))
    return ctx.error("mask must be [N, offset_group * kH * kW, oH, oW]");
  const std::vector<double> xv = doubles(*x), wv = doubles(*wt), ov = doubles(*off);
  const std::vector<double> mv = mask != nullptr ? doubles(*mask) : std::vector<double>();
  const std::vector<double> bv = bias != nullptr ? doubles(*bias) : std::vector<double>();
  if (bias != nullptr && static_cast<int64_t>(bv.size()) != oc) return ctx.error("B must be [oC]");
  const int64_t ocg = oc / group, icog = ic / og;
  std::vector<double> y(static_cast<size_t>(n * oc * oh * ow), 0.0);
  std::vector<double> col(static_cast<size_t>(ic * kh * kw));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        // Sampled (and masked) input for this output position: col[c][ky][kx].
        for (int64_t c = 0; c < ic; ++c) {
          const int64_t g = c / icog;
          const double* plane = xv.data() + (b * ic + c) * ih * iw;
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t k = (g * kh + ky) * kw + kx;
              const double dy =
                  ov[static_cast<size_t>(((b * og * kh * kw * 2 + k * 2) * oh + i) * ow + j)];
              const double dx =
                  ov[static_cast<size_t>(((b * og * kh * kw * 2 + k * 2 + 1) * oh + i) * ow + j)];
              const double py = static_cast<double>(i * st[0] - pads[0] + ky * dil[0]) + dy;
              const double px = static_cast<double>(j * st[1] - pads[1] + kx * dil[1]) + dx;
              double v = bilinear(plane, ih, iw, py, px);
              if (mask != nullptr)
                v *= mv[static_cast<size_t>(((b * og * kh * kw + k) * oh + i) * ow + j)];
              col[static_cast<size_t>((c * kh + ky) * kw + kx)] = v;
            }
        }
        for (int64_t o = 0; o < oc; ++o) {
          const int64_t g = o / ocg;
          double acc = bias != nullptr ? bv[static_cast<size_t>(o)] : 0.0;
          for (int64_t c = 0; c < icg; ++c)
            for (int64_t k = 0; k < kh * kw; ++k)
              acc += wv[static_cast<size_t>((o * icg + c) * kh * kw + k)] *
                     col[static_cast<size_t>(((g * icg + c) * kh * kw) + k)];
          y[static_cast<size_t>(((b * oc + o) * oh + i) * ow + j)] = acc;
        }
      }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), {n, oc, oh, ow}));
  return store(y, yt);
}

// Col2Im(input [N, C * prod(block), L], image_shape, block_shape): each column's block added back
// into the image at its sliding-window position (dilations, pads, strides).
Status col2im(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* img_t = ctx.input(1);
  const ir::Tensor* blk_t = ctx.input(2);
  if (x == nullptr || img_t == nullptr || blk_t == nullptr)
    return ctx.error("input, image_shape and block_shape are required");
  const std::vector<int64_t> img = img_t->to_int64_vector(), blk = blk_t->to_int64_vector();
  const size_t r = img.size();
  if (blk.size() != r || x->rank() != 3) return ctx.error("bad ranks");
  const auto dil = ctx.node().attr_ints("dilations", std::vector<int64_t>(r, 1));
  const auto st = ctx.node().attr_ints("strides", std::vector<int64_t>(r, 1));
  const auto pads = ctx.node().attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (dil.size() != r || st.size() != r || pads.size() != 2 * r)
    return ctx.error("dilations/strides/pads do not match image_shape");
  const int64_t kprod = prod(blk);
  const int64_t n = x->dims()[0];
  if (kprod <= 0 || x->dims()[1] % kprod != 0) return ctx.error("C * prod(block_shape) mismatch");
  const int64_t c = x->dims()[1] / kprod;
  std::vector<int64_t> nb(r);
  for (size_t i = 0; i < r; ++i)
    nb[i] = (img[i] + pads[i] + pads[i + r] - dil[i] * (blk[i] - 1) - 1) / st[i] + 1;
  const int64_t l = prod(nb);
  if (x->dims()[2] != l) return ctx.error("L does not match the number of blocks");
  const int64_t isz = prod(img);
  const auto ist = row_strides(img);
  const std::vector<double> xv = doubles(*x);
  std::vector<double> y(static_cast<size_t>(n * c * isz), 0.0);
  std::vector<int64_t> kidx(r), bidx(r);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t k = 0; k < kprod; ++k) {
        int64_t rem = k;
        for (size_t i = r; i-- > 0;) {
          kidx[i] = rem % blk[i];
          rem /= blk[i];
        }
        for (int64_t q = 0; q < l; ++q) {
          int64_t rq = q, off = 0;
          bool inside = true;
          for (size_t i = r; i-- > 0;) {
            bidx[i] = rq % nb[i];
            rq /= nb[i];
            const int64_t p = bidx[i] * st[i] - pads[i] + kidx[i] * dil[i];
            if (p < 0 || p >= img[i]) inside = false;
            off += p * ist[i];
          }
          if (!inside) continue;
          y[static_cast<size_t>((b * c + ch) * isz + off)] +=
              xv[static_cast<size_t>(((b * c + ch) * kprod + k) * l + q)];
        }
      }
  std::vector<int64_t> odims = {n, c};
  odims.insert(odims.end(), img.begin(), img.end());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), odims));
  return store(y, yt);
}

// MaxUnpool(X, I, output_shape): X's values placed at the flat positions I of a zero tensor of
// the inferred shape ((in - 1) * stride - pads + kernel), which is then written into the leading
// corner of output_shape when given.
Status max_unpool(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* ind = ctx.input(1);
  const ir::Tensor* shape_t = ctx.input(2);
  if (x == nullptr || ind == nullptr) return ctx.error("X and I are required");
  if (x->rank() < 3 || ind->dims() != x->dims()) return ctx.error("X and I must be [N, C, ...]");
  const size_t r = x->rank() - 2;
  const auto k = ctx.node().attr_ints("kernel_shape");
  const auto st = ctx.node().attr_ints("strides", std::vector<int64_t>(r, 1));
  const auto pads = ctx.node().attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (k.size() != r || st.size() != r || pads.size() != 2 * r)
    return ctx.error("kernel_shape/strides/pads do not match the spatial rank");
  std::vector<int64_t> inferred = {x->dims()[0], x->dims()[1]};
  for (size_t i = 0; i < r; ++i)
    inferred.push_back((x->dims()[i + 2] - 1) * st[i] - (pads[i] + pads[i + r]) + k[i]);
  std::vector<int64_t> odims = shape_t != nullptr ? shape_t->to_int64_vector() : inferred;
  if (odims.size() != inferred.size()) return ctx.error("output_shape has the wrong rank");
  for (size_t i = 0; i < odims.size(); ++i)
    if (odims[i] < inferred[i]) return ctx.error("output_shape is smaller than the inferred shape");
  const int64_t total = prod(inferred);
  std::vector<double> flat(static_cast<size_t>(total), 0.0);
  const std::vector<double> xv = doubles(*x);
  const std::vector<int64_t> iv = ind->to_int64_vector();
  for (size_t e = 0; e < xv.size(); ++e) {
    if (iv[e] < 0 || iv[e] >= total) return ctx.error("an index is out of range");
    flat[static_cast<size_t>(iv[e])] = xv[e];
  }
  std::vector<double> y(static_cast<size_t>(prod(odims)), 0.0);
  const auto ist = row_strides(inferred), ost = row_strides(odims);
  for (int64_t e = 0; e < total; ++e) {
    int64_t rem = e, o = 0;
    for (size_t i = 0; i < inferred.size(); ++i) {
      o += (rem / ist[i]) * ost[i];
      rem %= ist[i];
    }
    y[static_cast<size_t>(o)] = flat[static_cast<size_t>(e)];
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), odims));
  return store(y, yt);
}

}  // namespace

XOPT_CPU_KERNEL("", "DeformConv", 19, kLatest, deform_conv);
XOPT_CPU_KERNEL("", "Col2Im", 18, kLatest, col2im);
XOPT_CPU_KERNEL("", "MaxUnpool", 9, kLatest, max_unpool);

}  // namespace xopt::exec::ops
