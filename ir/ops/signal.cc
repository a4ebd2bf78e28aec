// Signal processing: DFT, STFT, the window functions (HannWindow, HammingWindow, BlackmanWindow)
// and MelWeightMatrix.
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

// DFT: the transformed axis becomes dft_length (n/2 + 1 when onesided and forward); the last dim
// (1 real, 2 complex) becomes 2, or 1 for an inverse onesided (real) result.
Status infer_dft(InferenceContext& ctx) {
  const bool axis_input = ctx.opset() >= 20;
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, axis_input ? 3 : 2));
  Shape x = ctx.input_shape(0);
  const DType t = ctx.input_dtype(0);
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape());
    return Status::ok();
  }
  const auto r = static_cast<int64_t>(x.rank());
  if (r < 2) return ctx.error("input must have rank >= 2, got " + str(x));
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis_input) {
    axis = -2;
    if (ctx.has_input(2)) {
      auto a = ctx.input_ints(2);
      if (!a || a->size() != 1) {
        ctx.set_output(0, t, Shape(std::vector<Dim>(x.rank(), Dim())));
        return Status::ok();
      }
      axis = (*a)[0];
    }
  }
  axis = ((axis % r) + r) % r;
  if (axis == r - 1) return ctx.error("axis must not be the last (real/imaginary) dim");
  const bool inverse = ctx.node().attr_int("inverse", 0) != 0;
  const bool onesided = ctx.node().attr_int("onesided", 0) != 0;
  Dim& a = x.mutable_dims()[static_cast<size_t>(axis)];
  Dim n = a;
  if (ctx.has_input(1)) {
    auto len = ctx.input_ints(1);
    n = len && len->size() == 1 ? Dim((*len)[0]) : Dim();
  } else if (inverse && onesided) {
    n = a.is_known() ? Dim(2 * (a.value - 1)) : Dim();
  }
  a = (onesided && !inverse) ? (n.is_known() ? Dim(n.value / 2 + 1) : Dim()) : n;
  x.mutable_dims().back() = Dim(inverse && onesided ? 1 : 2);
  ctx.set_output(0, t, x);
  return Status::ok();
}

// STFT(signal [B, L, 1|2], frame_step, window, frame_length) -> [B, frames, bins, 2].
Status infer_stft(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 4));
  const Shape& x = ctx.input_shape(0);
  const DType t = ctx.input_dtype(0);
  if (!x.has_rank()) {
    ctx.set_output(0, t, Shape({Dim(), Dim(), Dim(), Dim(2)}));
    return Status::ok();
  }
  if (x.rank() != 3) return ctx.error("signal must be [batch, length, 1 or 2], got " + str(x));
  Dim len;
  if (ctx.has_input(3)) {
    auto fl = ctx.input_ints(3);
    if (fl && fl->size() == 1) len = Dim((*fl)[0]);
  } else if (ctx.has_input(2)) {
    const Shape& w = ctx.input_shape(2);
    if (w.has_rank() && w.rank() == 1) len = w[0];
  } else {
    len = x[1];
  }
  Dim frames;
  auto step = ctx.input_ints(1);
  if (step && step->size() == 1 && (*step)[0] > 0 && len.is_known() && x[1].is_known())
    frames = Dim(1 + (x[1].value - len.value) / (*step)[0]);
  Dim bins = len;
  if (ctx.node().attr_int("onesided", 1) != 0)
    bins = len.is_known() ? Dim(len.value / 2 + 1) : Dim();
  ctx.set_output(0, t, Shape({x[0], frames, bins, Dim(2)}));
  return Status::ok();
}

Status infer_window(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  auto size = ctx.input_ints(0);
  ctx.set_output(0, static_cast<DType>(ctx.node().attr_int("output_datatype", 1)),
                 Shape({size && size->size() == 1 ? Dim((*size)[0]) : Dim()}));
  return Status::ok();
}

Status infer_mel(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 5, 5));
  auto bins = ctx.input_ints(0);
  auto dft = ctx.input_ints(1);
  ctx.set_output(0, static_cast<DType>(ctx.node().attr_int("output_datatype", 1)),
                 Shape({dft && dft->size() == 1 ? Dim((*dft)[0] / 2 + 1) : Dim(),
                        bins && bins->size() == 1 ? Dim((*bins)[0]) : Dim()}));
  return Status::ok();
}

}  // namespace

void register_signal_ops(OpList& ops) {
  ops.push_back(make_op("DFT", 17, 19, infer_dft));
  ops.push_back(make_op("DFT", 20, kMaxOpset, infer_dft));
  ops.push_back(make_op("STFT", 17, kMaxOpset, infer_stft));
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    ops.push_back(make_op(op, 17, kMaxOpset, infer_window));
  ops.push_back(make_op("MelWeightMatrix", 17, kMaxOpset, infer_mel));
}

}  // namespace xopt::ir::ops
