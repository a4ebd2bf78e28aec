// Detection ops: RoiAlign (avg / max, half_pixel or output_half_pixel coordinates) and
// NonMaxSuppression (corner or center boxes), as onnxruntime and the ONNX reference compute them.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"
#include "ir/ops/nms.h"

namespace xopt::exec::ops {
namespace {

struct Tap {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Status roi_align(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* rois = ctx.input(1);
  const ir::Tensor* bi = ctx.input(2);
  if (x == nullptr || rois == nullptr || bi == nullptr)
    return ctx.error("X, rois and batch_indices are required");
  if (x->rank() != 4 || rois->rank() != 2 || rois->dims()[1] != 4 || bi->rank() != 1 ||
      bi->dims()[0] != rois->dims()[0])
    return ctx.error("expects X [N, C, H, W], rois [R, 4], batch_indices [R]");
  const ir::Node& node = ctx.node();
  const std::string mode = node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.error("mode must be avg or max");
  const bool half_pixel = ctx.opset() >= 16 && node.attr_string("coordinate_transformation_mode",
                                                                "half_pixel") == "half_pixel";
  const int64_t oh = node.attr_int("output_height", 1), ow = node.attr_int("output_width", 1);
  const int64_t sampling = node.attr_int("sampling_ratio", 0);
  const double scale = node.attr_float("spatial_scale", 1.0f);
  const int64_t n = x->dims()[0], c = x->dims()[1], h = x->dims()[2], w = x->dims()[3];
  const int64_t nr = rois->dims()[0];
  const std::vector<double> xv = doubles(*x), rv = doubles(*rois);
  const std::vector<int64_t> bv = bi->to_int64_vector();
  std::vector<double> y(static_cast<size_t>(nr * c * oh * ow), 0.0);
  for (int64_t r = 0; r < nr; ++r) {
    const int64_t b = bv[static_cast<size_t>(r)];
    if (b < 0 || b >= n) return ctx.error("batch index " + std::to_string(b) + " is out of range");
    const double off = half_pixel ? 0.5 : 0.0;
    const double sw = rv[static_cast<size_t>(r * 4)] * scale - off;
    const double sh = rv[static_cast<size_t>(r * 4 + 1)] * scale - off;
    const double ew = rv[static_cast<size_t>(r * 4 + 2)] * scale - off;
    const double eh = rv[static_cast<size_t>(r * 4 + 3)] * scale - off;
    double rw = ew - sw, rh = eh - sh;
    if (!half_pixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    const int64_t gh =
        sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(rh / static_cast<double>(oh)));
    const int64_t gw =
        sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(rw / static_cast<double>(ow)));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    std::vector<Tap> taps(static_cast<size_t>(oh * ow * gh * gw));
    size_t k = 0;
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw)
        for (int64_t iy = 0; iy < gh; ++iy) {
          const double yy = sh + static_cast<double>(ph) * bh +
                            (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
          for (int64_t ix = 0; ix < gw; ++ix, ++k) {
            double xx = sw + static_cast<double>(pw) * bw +
                        (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
            double yv = yy;
            Tap& t = taps[k];
            if (yv < -1.0 || yv > static_cast<double>(h) || xx < -1.0 ||
                xx > static_cast<double>(w))
              continue;
            yv = std::max(yv, 0.0);
            xx = std::max(xx, 0.0);
            auto yl = static_cast<int64_t>(yv), xl = static_cast<int64_t>(xx);
            int64_t yh, xh;
            if (yl >= h - 1) {
              yh = yl = h - 1;
              yv = static_cast<double>(yl);
            } else {
              yh = yl + 1;
            }
            if (xl >= w - 1) {
              xh = xl = w - 1;
              xx = static_cast<double>(xl);
            } else {
              xh = xl + 1;
            }
            const double ly = yv - static_cast<double>(yl), lx = xx - static_cast<double>(xl);
            const double hy = 1.0 - ly, hx = 1.0 - lx;
            t.pos[0] = yl * w + xl;
            t.pos[1] = yl * w + xh;
            t.pos[2] = yh * w + xl;
            t.pos[3] = yh * w + xh;
            t.w[0] = hy * hx;
            t.w[1] = hy * lx;
            t.w[2] = ly * hx;
            t.w[3] = ly * lx;
          }
        }
    for (int64_t ch = 0; ch < c; ++ch) {
      const double* src = xv.data() + (b * c + ch) * h * w;
      size_t q = 0;
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          double v = 0.0;
          bool first = true;
          for (int64_t s = 0; s < gh * gw; ++s, ++q) {
            const Tap& t = taps[q];
            if (mode == "avg") {
              for (int j = 0; j < 4; ++j) v += t.w[j] * src[t.pos[j]];
            } else {
              double m = t.w[0] * src[t.pos[0]];
              for (int j = 1; j < 4; ++j) m = std::max(m, t.w[j] * src[t.pos[j]]);
              v = first ? m : std::max(v, m);
              first = false;
            }
          }
          if (mode == "avg") v /= count;
          y[static_cast<size_t>(((r * c + ch) * oh + ph) * ow + pw)] = v;
        }
    }
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), {nr, c, oh, ow}));
  return store(y, yt);
}

Status nms(KernelContext& ctx) {
  const ir::Tensor* boxes = ctx.input(0);
  const ir::Tensor* scores = ctx.input(1);
  if (boxes == nullptr || scores == nullptr) return ctx.error("boxes and scores are required");
  if (boxes->rank() != 3 || boxes->dims()[2] != 4 || scores->rank() != 3 ||
      scores->dims()[0] != boxes->dims()[0] || scores->dims()[2] != boxes->dims()[1])
    return ctx.error("expects boxes [B, N, 4] and scores [B, C, N]");
  const ir::Tensor* max_t = ctx.input(2);
  const ir::Tensor* iou_t = ctx.input(3);
  const ir::Tensor* score_t = ctx.input(4);
  const int64_t max_out =
      max_t != nullptr && max_t->numel() > 0 ? std::max<int64_t>(max_t->as_int64(0), 0) : 0;
  const double iou = iou_t != nullptr && iou_t->numel() > 0 ? iou_t->as_double(0) : 0.0;
  const bool has_score = score_t != nullptr && score_t->numel() > 0;
  const double score_thr = has_score ? score_t->as_double(0) : 0.0;
  const bool center = ctx.node().attr_int("center_point_box", 0) != 0;
  ir::ops::NmsParams p;
  p.batches = boxes->dims()[0];
  p.boxes = boxes->dims()[1];
  p.classes = scores->dims()[1];
  p.max_per_class = max_out;
  p.iou_threshold = iou;
  p.has_score_threshold = has_score;
  p.score_threshold = score_thr;
  p.center_point_box = center;
  const std::vector<int64_t> sel = ir::ops::nms_select(doubles(*boxes), doubles(*scores), p);
  const auto count = static_cast<int64_t>(sel.size() / 3);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kInt64, {count, 3}));
  std::copy(sel.begin(), sel.end(), y->mutable_data<int64_t>());
  return Status::ok();
}

}  // namespace

XOPT_CPU_KERNEL("", "RoiAlign", 10, kLatest, roi_align);
XOPT_CPU_KERNEL("", "NonMaxSuppression", 10, kLatest, nms);

}  // namespace xopt::exec::ops
