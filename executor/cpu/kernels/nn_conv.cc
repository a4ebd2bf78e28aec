// Conv and ConvTranspose for 1-D, 2-D, 3-D (any rank) inputs: im2col / col2im around a BLAS GEMM.
#include "executor/cpu/kernels/nn_conv.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "executor/cpu/gemm.h"
#include "executor/cpu/parallel.h"

namespace xopt::exec::nn {
namespace {

// Copies the receptive fields of one image's `channels` channels into `col`
// ([channels * prod(kernel), prod(out)]), zero where the window covers padding.
template <typename T>
void im2col(const Window& w, const T* x, int64_t channels, T* col) {
  const size_t r = w.rank();
  const int64_t in_size = product(w.in), out_size = product(w.out), ksize = product(w.kernel);
  const int64_t ow_n = w.out[r - 1], iw_n = w.in[r - 1];
  const int64_t sw = w.strides[r - 1], dw = w.dilations[r - 1], pw = w.pads[r - 1];
  const int64_t outer_n = out_size / ow_n;  // output positions of all but the last spatial dim
  std::vector<int64_t> kidx(r), oidx(r);
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_size;
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t k = 0; k < ksize; ++k) {
      T* row = col + (c * ksize + k) * out_size;
      std::fill(oidx.begin(), oidx.end(), 0);
      for (int64_t o = 0; o < outer_n; ++o) {
        // Input offset of this output row's leading dims, or -1 when it falls in padding.
        int64_t off = 0;
        bool valid = true;
        for (size_t d = 0; d + 1 < r; ++d) {
          const int64_t i = oidx[d] * w.strides[d] - w.pads[d] + kidx[d] * w.dilations[d];
          if (i < 0 || i >= w.in[d]) {
            valid = false;
            break;
          }
          off = off * w.in[d] + i;
        }
        T* dst = row + o * ow_n;
        if (!valid) {
          std::fill(dst, dst + ow_n, T(0));
        } else {
          const T* src = xc + off * iw_n;
          const int64_t base = kidx[r - 1] * dw - pw;
          // Outputs [lo, hi) read inside the row (0 <= ow * sw + base < iw_n); padding elsewhere.
          const int64_t lo = std::min(ow_n, base >= 0 ? 0 : (sw - 1 - base) / sw);
          const int64_t hi =
              std::max(lo, std::min(ow_n, base >= iw_n ? 0 : (iw_n - base + sw - 1) / sw));
          std::fill(dst, dst + lo, T(0));
          if (sw == 1) {
            std::copy(src + base + lo, src + base + hi, dst + lo);
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * sw + base];
          }
          std::fill(dst + hi, dst + ow_n, T(0));
        }
        for (size_t d = r - 1; d-- > 0;) {  // odometer over the leading output dims
          if (++oidx[d] < w.out[d]) break;
          oidx[d] = 0;
        }
      }
      for (size_t d = r; d-- > 0;) {
        if (++kidx[d] < w.kernel[d]) break;
        kidx[d] = 0;
      }
    }
  }
}

// Adds `col` ([channels * prod(kernel), prod(w.in)]) back into the image `y` ([channels,
// prod(out)]): the adjoint of im2col with the roles of in and out swapped (w.in are ConvTranspose's
// input dims).
template <typename T>
void col2im(const Window& w, const T* col, int64_t channels, T* y) {
  const size_t r = w.rank();
  const int64_t in_size = product(w.in), out_size = product(w.out), ksize = product(w.kernel);
  std::vector<int64_t> kidx(r), iidx(r);
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * out_size;
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t k = 0; k < ksize; ++k) {
      const T* row = col + (c * ksize + k) * in_size;
      std::fill(iidx.begin(), iidx.end(), 0);
      for (int64_t i = 0; i < in_size; ++i) {
        int64_t off = 0;
        bool valid = true;
        for (size_t d = 0; d < r; ++d) {
          const int64_t o = iidx[d] * w.strides[d] - w.pads[d] + kidx[d] * w.dilations[d];
          if (o < 0 || o >= w.out[d]) {
            valid = false;
            break;
          }
          off = off * w.out[d] + o;
        }
        if (valid) yc[off] += row[i];
        for (size_t d = r; d-- > 0;) {
          if (++iidx[d] < w.in[d]) break;
          iidx[d] = 0;
        }
      }
      for (size_t d = r; d-- > 0;) {
        if (++kidx[d] < w.kernel[d]) break;
        kidx[d] = 0;
      }
    }
  }
}

bool is_pointwise(const Window& w) {
  for (size_t i = 0; i < w.rank(); ++i)
    if (w.kernel[i] != 1 || w.strides[i] != 1 || w.pads[i] != 0 || w.pads[i + w.rank()] != 0)
      return false;
  return true;
}

// y[N, M, out...] = conv(x[N, C, in...], wt[M, C/group, k...]) + bias, then + z, then act. The
// im2col copy and the bias / z / activation pass are split over channels across the intra-op
// threads, the GEMM inside gemm().
template <typename T>
void conv_core(const Window& w, int64_t group, int64_t n_batch, int64_t c_in, int64_t m_out,
               const T* x, const T* wt, const T* bias, const T* z, const Activation& act, T* y) {
  const int64_t in_size = product(w.in), out_size = product(w.out), ksize = product(w.kernel);
  const int64_t cg = c_in / group, mg = m_out / group, kdim = cg * ksize;
  const bool pointwise = is_pointwise(w);
  // Z planned in Y's bytes (the planner's in-place residual): each image's convolution goes to a
  // staging buffer first and is finished into Y ((conv + bias) + z, the order of the epilogue
  // below, so the result is bit for bit the one of Z in bytes of its own).
  const bool z_in_y = z != nullptr && z == y;
  std::unique_ptr<T[]> staged(z_in_y ? new T[static_cast<size_t>(m_out * out_size)] : nullptr);
  // Uninitialised: im2col writes every element.
  std::unique_ptr<T[]> col(pointwise ? nullptr : new T[static_cast<size_t>(kdim * out_size)]);
  // Channels per chunk so that a chunk moves at least ~32K elements.
  const int64_t col_grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, ksize * out_size));
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, out_size));
  for (int64_t n = 0; n < n_batch; ++n) {
    T* y_n = z_in_y ? staged.get() : y + n * m_out * out_size;
    for (int64_t g = 0; g < group; ++g) {
      const T* xg = x + (n * c_in + g * cg) * in_size;
      const T* b = xg;
      if (!pointwise) {
        T* cp = col.get();
        parallel_for(cg, col_grain, [&](int64_t c0, int64_t c1) {
          im2col(w, xg + c0 * in_size, c1 - c0, cp + c0 * ksize * out_size);
        });
        b = cp;
      }
      gemm<T>(false, false, mg, out_size, kdim, 1.0, wt + g * mg * kdim, kdim, b, out_size, 0.0,
              y_n + g * mg * out_size, out_size);
    }
    if (!z_in_y) continue;
    parallel_for(m_out, grain, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        T* p = y + (n * m_out + c) * out_size;
        const T* s = staged.get() + c * out_size;
        for (int64_t i = 0; i < out_size; ++i) {
          T v = s[i];
          if (bias != nullptr) v += bias[c];
          p[i] = v + p[i];
        }
        act.apply(p, out_size);
      }
    });
  }
  if (z_in_y) return;
  if (bias == nullptr && z == nullptr && act.kind == Activation::kIdentity) return;
  const int64_t total = n_batch * m_out;
  parallel_for(total, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t nm = lo; nm < hi; ++nm) {
      T* p = y + nm * out_size;
      if (bias != nullptr) {
        const T bv = bias[nm % m_out];
        for (int64_t i = 0; i < out_size; ++i) p[i] += bv;
      }
      if (z != nullptr) {
        const T* zp = z + nm * out_size;
        for (int64_t i = 0; i < out_size; ++i) p[i] += zp[i];
      }
      act.apply(p, out_size);
    }
  });
}

// Runs `body(TypeTag<C>, x, w, b, z)` in compute type C (float for half types) on converted copies
// of the inputs, then stores the C result into `out` of the original dtype.
template <typename F>
Status with_compute_type(const KernelContext& ctx, ir::DType dt, F&& body) {
  if (dt == ir::DType::kFloat) return body(TypeTag<float>{});
  if (dt == ir::DType::kDouble) return body(TypeTag<double>{});
  if (is_half(dt)) return body(TypeTag<float>{});
  return ctx.unsupported(std::string("element type ") + std::string(ir::dtype_name(dt)) +
                         " (float16, bfloat16, float and double only)");
}

// A tensor's data as compute type C: a widened copy for half types, the tensor itself otherwise.
template <typename C>
const C* compute_data(const ir::Tensor* t, ir::Tensor* holder) {
  if (t == nullptr) return nullptr;
  if constexpr (std::is_same_v<C, float>) {
    if (is_half(t->dtype())) {
      *holder = to_float_tensor(*t);
      return holder->data<float>();
    }
  }
  return t->data<C>();
}

Status check_float_inputs(const KernelContext& ctx, ir::DType dt,
                          std::initializer_list<size_t> idx) {
  for (size_t i : idx)
    if (ctx.input(i) != nullptr && ctx.input(i)->dtype() != dt)
      return ctx.error("input " + std::to_string(i) + " has element type " +
                       std::string(ir::dtype_name(ctx.input(i)->dtype())) + ", expected " +
                       std::string(ir::dtype_name(dt)));
  return Status::ok();
}

Status conv(KernelContext& ctx) {
  return run_conv(ctx, Activation{}, nullptr);
}

Status conv_transpose(KernelContext& ctx) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1}));
  const ir::Tensor& x = *ctx.input(0);
  const ir::Tensor& wt = *ctx.input(1);
  const ir::Tensor* b = ctx.input(2);
  const ir::DType dt = x.dtype();
  XOPT_RETURN_IF_ERROR(check_float_inputs(ctx, dt, {1, 2}));
  const ir::Node& node = ctx.node();
  if (x.rank() < 3 || wt.rank() != x.rank())
    return ctx.error("X and W must have the same rank >= 3, got " + std::to_string(x.rank()) +
                     " and " + std::to_string(wt.rank()));
  const size_t r = x.rank() - 2;
  const int64_t group = node.attr_int("group", 1);
  const int64_t n_batch = x.dims()[0], c_in = x.dims()[1];
  if (group < 1 || c_in % group != 0 || wt.dims()[0] != c_in)
    return ctx.error("W has " + std::to_string(wt.dims()[0]) + " input channels, X has " +
                     std::to_string(c_in) + " (group " + std::to_string(group) + ")");
  const int64_t m_out = wt.dims()[1] * group;
  if (b != nullptr && b->numel() != m_out)
    return ctx.error("B has " + std::to_string(b->numel()) + " elements, expected " +
                     std::to_string(m_out));

  Window w;
  w.in.assign(x.dims().begin() + 2, x.dims().end());
  w.kernel =
      node.attr_ints("kernel_shape", std::vector<int64_t>(wt.dims().begin() + 2, wt.dims().end()));
  w.strides = node.attr_ints("strides", std::vector<int64_t>(r, 1));
  w.dilations = node.attr_ints("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(r, 0));
  std::vector<int64_t> out_shape = node.attr_ints("output_shape");
  if (out_shape.size() == r + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (w.kernel.size() != r || w.strides.size() != r || w.dilations.size() != r ||
      out_pad.size() != r || (!out_shape.empty() && out_shape.size() != r))
    return ctx.error(
        "kernel_shape/strides/dilations/output_padding/output_shape do not match the " +
        std::to_string(r) + " spatial dims of X");
  for (size_t i = 0; i < r; ++i)
    if (w.kernel[i] != wt.dims()[i + 2])
      return ctx.error("kernel_shape does not match the dims of W");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID" && !auto_pad.empty())
    return ctx.error("unknown auto_pad '" + auto_pad + "'");
  if (same && out_shape.empty())
    for (size_t i = 0; i < r; ++i) out_shape.push_back(w.in[i] * w.strides[i]);
  w.out.resize(r);
  if (!out_shape.empty()) {
    // Pads follow from the requested output shape; a negative total padding (an output larger
    // than the full result) leaves the surplus at the end, as onnxruntime does.
    w.pads.assign(2 * r, 0);
    for (size_t i = 0; i < r; ++i) {
      const int64_t total = w.strides[i] * (w.in[i] - 1) + out_pad[i] + w.extent(i) - out_shape[i];
      const int64_t half = total / 2;
      if (total < 0) {
        w.pads[i] = 0;
        w.pads[i + r] = total;
      } else if (auto_pad == "SAME_UPPER") {
        w.pads[i] = half;
        w.pads[i + r] = total - half;
      } else {
        w.pads[i] = total - half;
        w.pads[i + r] = half;
      }
      w.out[i] = out_shape[i];
    }
  } else {
    w.pads = auto_pad == "VALID" ? std::vector<int64_t>(2 * r, 0)
                                 : node.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
    if (w.pads.size() != 2 * r) return ctx.error("pads must have 2 * spatial rank entries");
    for (size_t i = 0; i < r; ++i)
      w.out[i] =
          w.strides[i] * (w.in[i] - 1) + out_pad[i] + w.extent(i) - w.pads[i] - w.pads[i + r];
  }
  for (size_t i = 0; i < r; ++i)
    if (w.out[i] < 0) return ctx.error("computed output shape is negative");

  std::vector<int64_t> y_dims = {n_batch, m_out};
  y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, dt, y_dims));
  return with_compute_type(ctx, dt, [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    ir::Tensor hx, hw, hb;
    const C* xd = compute_data<C>(&x, &hx);
    const C* wd = compute_data<C>(&wt, &hw);
    const C* bd = compute_data<C>(b, &hb);
    const int64_t in_size = product(w.in), out_size = product(w.out), ksize = product(w.kernel);
    const int64_t cg = c_in / group, mg = m_out / group;
    std::vector<C> yv(static_cast<size_t>(n_batch * m_out * out_size), C(0));
    std::vector<C> col(static_cast<size_t>(mg * ksize * in_size));
    for (int64_t n = 0; n < n_batch; ++n) {
      for (int64_t g = 0; g < group; ++g) {
        // col [mg*K, in] = W_g^T, with W_g stored [cg, mg*K], times X_g [cg, in].
        gemm<C>(true, false, mg * ksize, in_size, cg, 1.0, wd + g * cg * mg * ksize, mg * ksize,
                xd + (n * c_in + g * cg) * in_size, in_size, 0.0, col.data(), in_size);
        col2im(w, col.data(), mg, yv.data() + (n * m_out + g * mg) * out_size);
      }
    }
    if (bd != nullptr)
      for (int64_t nm = 0; nm < n_batch * m_out; ++nm)
        for (int64_t i = 0; i < out_size; ++i) yv[nm * out_size + i] += bd[nm % m_out];
    if constexpr (std::is_same_v<C, double>) {
      std::copy(yv.begin(), yv.end(), y->mutable_data<double>());
    } else {
      store_from_float(yv.data(), y);
    }
    return Status::ok();
  });
}

}  // namespace

Status run_conv(KernelContext& ctx, const Activation& act, const ir::Tensor* z) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1}));
  const ir::Tensor& x = *ctx.input(0);
  const ir::Tensor& wt = *ctx.input(1);
  const ir::Tensor* b = ctx.input(2);
  const ir::DType dt = x.dtype();
  XOPT_RETURN_IF_ERROR(check_float_inputs(ctx, dt, {1, 2, 3}));
  if (x.rank() < 3 || wt.rank() != x.rank())
    return ctx.error("X and W must have the same rank >= 3, got " + std::to_string(x.rank()) +
                     " and " + std::to_string(wt.rank()));
  const int64_t group = ctx.node().attr_int("group", 1);
  const int64_t n_batch = x.dims()[0], c_in = x.dims()[1], m_out = wt.dims()[0];
  if (group < 1 || c_in % group != 0 || m_out % group != 0 || wt.dims()[1] * group != c_in)
    return ctx.error("W [" + std::to_string(m_out) + ", " + std::to_string(wt.dims()[1]) +
                     ", ...] does not fit X with " + std::to_string(c_in) + " channels and group " +
                     std::to_string(group));
  if (b != nullptr && b->numel() != m_out)
    return ctx.error("B has " + std::to_string(b->numel()) + " elements, expected " +
                     std::to_string(m_out));
  XOPT_ASSIGN_OR_RETURN(
      Window w,
      make_window(ctx, x.dims(), std::vector<int64_t>(wt.dims().begin() + 2, wt.dims().end()),
                  /*ceil_mode=*/false));
  for (size_t i = 0; i < w.rank(); ++i)
    if (w.kernel[i] != wt.dims()[i + 2])
      return ctx.error("kernel_shape does not match the dims of W");
  std::vector<int64_t> y_dims = {n_batch, m_out};
  y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
  if (z != nullptr && z->dims() != y_dims) return ctx.error("Z must have the output's shape");
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, dt, y_dims));
  if (y->numel() == 0) return Status::ok();
  return with_compute_type(ctx, dt, [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    ir::Tensor hx, hw, hb, hz;
    const C* xd = compute_data<C>(&x, &hx);
    const C* wd = compute_data<C>(&wt, &hw);
    const C* bd = compute_data<C>(b, &hb);
    const C* zd = compute_data<C>(z, &hz);
    if constexpr (std::is_same_v<C, float>) {
      if (is_half(dt)) {
        std::vector<float> yv(static_cast<size_t>(y->numel()));
        conv_core<float>(w, group, n_batch, c_in, m_out, xd, wd, bd, zd, act, yv.data());
        store_from_float(yv.data(), y);
        return Status::ok();
      }
    }
    conv_core<C>(w, group, n_batch, c_in, m_out, xd, wd, bd, zd, act, y->mutable_data<C>());
    return Status::ok();
  });
}

XOPT_CPU_KERNEL("", "Conv", 1, kLatestOpset, conv);
XOPT_CPU_KERNEL("", "ConvTranspose", 1, kLatestOpset, conv_transpose);

}  // namespace xopt::exec::nn
