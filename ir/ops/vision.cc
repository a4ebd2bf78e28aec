// Detection and sampling ops: GridSample, AffineGrid, RoiAlign, NonMaxSuppression, DeformConv,
// Col2Im and MaxUnpool; and ImageDecoder.
#include <algorithm>
#include <string>

#include "ir/ops/nms.h"
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

// Whether box b suppresses box a: IoU > threshold (boxes [y1, x1, y2, x2] with the corners in any
// order, or [xc, yc, w, h] with center_point_box).
bool suppress(const double* a, const double* b, bool center, double thr) {
  double ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (!center) {
    ax0 = std::min(a[1], a[3]);
    ax1 = std::max(a[1], a[3]);
    ay0 = std::min(a[0], a[2]);
    ay1 = std::max(a[0], a[2]);
    bx0 = std::min(b[1], b[3]);
    bx1 = std::max(b[1], b[3]);
    by0 = std::min(b[0], b[2]);
    by1 = std::max(b[0], b[2]);
  } else {
    ax0 = a[0] - a[2] / 2;
    ax1 = a[0] + a[2] / 2;
    ay0 = a[1] - a[3] / 2;
    ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2;
    bx1 = b[0] + b[2] / 2;
    by0 = b[1] - b[3] / 2;
    by1 = b[1] + b[3] / 2;
  }
  const double ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  const double iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  const double inter = (ix1 - ix0) * (iy1 - iy0);
  const double a1 = (ax1 - ax0) * (ay1 - ay0), a2 = (bx1 - bx0) * (by1 - by0);
  const double uni = a1 + a2 - inter;
  if (inter <= 0 || a1 <= 0 || a2 <= 0 || uni <= 0) return false;
  return inter / uni > thr;
}

}  // namespace

std::vector<int64_t> nms_select(const std::vector<double>& boxes, const std::vector<double>& scores,
                                const NmsParams& p) {
  std::vector<int64_t> sel;
  for (int64_t b = 0; b < p.batches; ++b)
    for (int64_t cl = 0; cl < p.classes; ++cl) {
      const double* s = scores.data() + (b * p.classes + cl) * p.boxes;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < p.boxes; ++i)
        if (!p.has_score_threshold || s[i] > p.score_threshold) cand.push_back(i);
      // Highest score first; among equal scores the lower index first.
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        bool ok = true;
        for (int64_t j : kept)
          if (suppress(boxes.data() + (b * p.boxes + i) * 4, boxes.data() + (b * p.boxes + j) * 4,
                       p.center_point_box, p.iou_threshold)) {
            ok = false;
            break;
          }
        if (!ok) continue;
        kept.push_back(i);
        sel.insert(sel.end(), {b, cl, i});
      }
    }
  return sel;
}

namespace {

// GridSample: X [N, C, D1..Dr], grid [N, O1..Or, r] -> [N, C, O1..Or].
Status infer_grid_sample(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Shape& x = ctx.input_shape(0);
  const Shape& g = ctx.input_shape(1);
  const DType t = ctx.input_dtype(0);
  if (!x.has_rank() || !g.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  if (x.rank() < 3 || g.rank() != x.rank())
    return ctx.error("X " + str(x) + " and grid " + str(g) +
                     " must be [N, C, D...] and [N, O..., r]");
  std::vector<Dim> out = {x[0], x[1]};
  out.insert(out.end(), g.dims().begin() + 1, g.dims().end() - 1);
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

// AffineGrid: theta [N, 2, 3] and size (N, C, H, W) -> [N, H, W, 2]; theta [N, 3, 4] and size
// (N, C, D, H, W) -> [N, D, H, W, 3].
Status infer_affine_grid(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const DType t = ctx.input_dtype(0);
  auto size = ctx.input_ints(1);
  if (!size) {
    const Shape& s = ctx.input_shape(1);
    if (s.has_rank() && s.rank() == 1 && s[0].is_known()) {
      XOPT_ASSIGN_OR_RETURN(size_t rank, rank_of_shape_input(ctx, s[0]));
      ctx.set_output(0, t, Shape(std::vector<Dim>(rank)));
    } else {
      ctx.set_output(0, t, Shape());
    }
    return Status::ok();
  }
  if (size->size() != 4 && size->size() != 5) return ctx.error("size must have 4 or 5 elements");
  std::vector<Dim> out = {Dim((*size)[0])};
  for (size_t i = 2; i < size->size(); ++i) out.push_back(Dim((*size)[i]));
  out.push_back(Dim(static_cast<int64_t>(size->size()) - 2));
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

// RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, output_height, output_width].
Status infer_roi_align(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  const Shape& x = ctx.input_shape(0);
  const Shape& rois = ctx.input_shape(1);
  Dim r = rois.has_rank() && rois.rank() == 2 ? rois[0] : Dim();
  Dim c = x.has_rank() && x.rank() == 4 ? x[1] : Dim();
  ctx.set_output(0, ctx.input_dtype(0),
                 Shape({r, c, Dim(ctx.node().attr_int("output_height", 1)),
                        Dim(ctx.node().attr_int("output_width", 1))}));
  return Status::ok();
}

// NonMaxSuppression: [selected, 3]; the count is known when every given input is a constant.
Status infer_nms(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 5));
  Dim count;
  const Tensor* boxes = ctx.input_constant(0);
  const Tensor* scores = ctx.input_constant(1);
  bool all_known = boxes != nullptr && scores != nullptr;
  for (size_t i = 2; i < 5; ++i)
    if (ctx.has_input(i) && ctx.input_constant(i) == nullptr) all_known = false;
  if (all_known && boxes->rank() == 3 && scores->rank() == 3 && boxes->dims()[2] == 4 &&
      scores->dims()[0] == boxes->dims()[0] && scores->dims()[2] == boxes->dims()[1]) {
    NmsParams p;
    p.batches = boxes->dims()[0];
    p.boxes = boxes->dims()[1];
    p.classes = scores->dims()[1];
    const Tensor* m = ctx.has_input(2) ? ctx.input_constant(2) : nullptr;
    const Tensor* iou = ctx.has_input(3) ? ctx.input_constant(3) : nullptr;
    const Tensor* sc = ctx.has_input(4) ? ctx.input_constant(4) : nullptr;
    p.max_per_class = m != nullptr && m->numel() > 0 ? std::max<int64_t>(m->as_int64(0), 0) : 0;
    p.iou_threshold = iou != nullptr && iou->numel() > 0 ? iou->as_double(0) : 0.0;
    p.has_score_threshold = sc != nullptr && sc->numel() > 0;
    p.score_threshold = p.has_score_threshold ? sc->as_double(0) : 0.0;
    p.center_point_box = ctx.node().attr_int("center_point_box", 0) != 0;
    std::vector<double> bv(static_cast<size_t>(boxes->numel())),
        sv(static_cast<size_t>(scores->numel()));
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = boxes->as_double(static_cast<int64_t>(i));
    for (size_t i = 0; i < sv.size(); ++i) sv[i] = scores->as_double(static_cast<int64_t>(i));
    count = Dim(static_cast<int64_t>(nms_select(bv, sv, p).size() / 3));
  }
  ctx.set_output(0, DType::kInt64, Shape({count, Dim(3)}));
  return Status::ok();
}

// DeformConv(X, W, offset, B, mask): Conv's output shape.
Status infer_deform_conv(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 5));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const Shape& off = ctx.input_shape(2);
  const DType t = ctx.input_dtype(0);
  if (!x.has_rank() || !w.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  std::vector<Dim> out = {x[0], w[0]};
  // The offset's spatial dims are the output's.
  if (off.has_rank() && off.rank() == x.rank()) {
    out.insert(out.end(), off.dims().begin() + 2, off.dims().end());
    ctx.set_output(0, t, Shape(std::move(out)));
    return Status::ok();
  }
  auto s = conv_output_shape(ctx, 0, 1, 3);
  if (!s.is_ok()) return s.status();
  ctx.set_output(0, t, *s);
  return Status::ok();
}

// Col2Im(input [N, C*prod(block), L], image_shape, block_shape) -> [N, C, image_shape...].
Status infer_col2im(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, 3));
  const Shape& x = ctx.input_shape(0);
  const DType t = ctx.input_dtype(0);
  auto image = ctx.input_ints(1);
  auto block = ctx.input_ints(2);
  if (!image || !block || !x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  if (x.rank() != 3) return ctx.error("input must be 3-D, got " + str(x));
  int64_t bp = 1;
  for (int64_t b : *block) bp *= b;
  Dim c = x[1].is_known() && bp > 0 && x[1].value % bp == 0 ? Dim(x[1].value / bp) : Dim();
  std::vector<Dim> out = {x[0], c};
  for (int64_t v : *image) out.push_back(Dim(v));
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

// MaxUnpool(X, I, output_shape): output_shape when given, else (in - 1) * stride - pads + kernel.
Status infer_max_unpool(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 3));
  const Shape& x = ctx.input_shape(0);
  const DType t = ctx.input_dtype(0);
  if (ctx.has_input(2)) {
    auto s = ctx.input_ints(2);
    if (s) {
      ctx.set_output(0, t, Shape::of(*s));
    } else {
      const Shape& ss = ctx.input_shape(2);
      if (ss.has_rank() && ss.rank() == 1 && ss[0].is_known()) {
        XOPT_ASSIGN_OR_RETURN(size_t rank, rank_of_shape_input(ctx, ss[0]));
        ctx.set_output(0, t, Shape(std::vector<Dim>(rank)));
      } else {
        ctx.set_output(0, t, Shape());
      }
    }
    return Status::ok();
  }
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  if (x.rank() < 3) return ctx.error("X must have rank >= 3");
  const size_t r = x.rank() - 2;
  const auto k = ctx.node().attr_ints("kernel_shape");
  const auto st = ctx.node().attr_ints("strides", std::vector<int64_t>(r, 1));
  const auto pads = ctx.node().attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (k.size() != r || st.size() != r || pads.size() != 2 * r)
    return ctx.error("kernel_shape/strides/pads do not match the spatial rank");
  std::vector<Dim> out = {x[0], x[1]};
  for (size_t i = 0; i < r; ++i) {
    const Dim& in = x[i + 2];
    out.push_back(in.is_known() ? Dim((in.value - 1) * st[i] - pads[i] - pads[i + r] + k[i])
                                : Dim());
  }
  ctx.set_output(0, t, Shape(std::move(out)));
  return Status::ok();
}

// ImageDecoder(encoded_stream uint8[N]) -> uint8 [H, W, 3] (RGB, BGR) or [H, W, 1] (Grayscale).
// H and W are in the encoded image, which inference does not decode: they stay unknown.
Status infer_image_decoder(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const DType t = ctx.input_dtype(0);
  if (t != DType::kUndefined && t != DType::kUInt8)
    return ctx.error("encoded_stream must be uint8, got " + std::string(dtype_name(t)));
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() != 1) return ctx.error("encoded_stream must be 1-D, got " + str(x));
  const std::string format = ctx.node().attr_string("pixel_format", "RGB");
  if (format != "RGB" && format != "BGR" && format != "Grayscale")
    return ctx.error("pixel_format must be RGB, BGR or Grayscale, not '" + format + "'");
  ctx.set_output(0, DType::kUInt8, Shape({Dim(), Dim(), Dim(format == "Grayscale" ? 1 : 3)}));
  return Status::ok();
}

}  // namespace

void register_vision_ops(OpList& ops) {
  ops.push_back(make_op("GridSample", 16, kMaxOpset, infer_grid_sample));
  ops.push_back(make_op("AffineGrid", 20, kMaxOpset, infer_affine_grid));
  ops.push_back(make_op("RoiAlign", 10, kMaxOpset, infer_roi_align));
  ops.push_back(make_op("NonMaxSuppression", 10, kMaxOpset, infer_nms));
  ops.push_back(make_op("DeformConv", 19, kMaxOpset, infer_deform_conv));
  ops.push_back(make_op("Col2Im", 18, kMaxOpset, infer_col2im));
  ops.push_back(make_op("MaxUnpool", 9, kMaxOpset, infer_max_unpool));
  ops.push_back(make_op("ImageDecoder", 20, kMaxOpset, infer_image_decoder));
}

}  // namespace xopt::ir::ops
