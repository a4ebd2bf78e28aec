// DepthToSpace and SpaceToDepth: reshape-transpose-reshape of NCHW tensors, done as one strided
// copy.
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

// CRD (column-row-depth) or DCR (depth-column-row, the default) block order.
Result<bool> crd_mode(const KernelContext& ctx, bool has_mode) {
  std::string mode = has_mode ? ctx.node().attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") return ctx.error("mode '" + mode + "' is not DCR or CRD");
  return mode == "CRD";
}

Result<int64_t> block_size(const KernelContext& ctx, const ir::Tensor& x) {
  if (x.rank() != 4) return ctx.error("input must have rank 4, has " + std::to_string(x.rank()));
  int64_t b = ctx.node().attr_int("blocksize", 0);
  if (b <= 0) return ctx.error("attribute 'blocksize' must be positive");
  return b;
}

// DCR: x viewed as [n, b, b, c', h, w] -> [n, c', h, b, w, b]; CRD: [n, c', b, b, h, w] -> the
// same.
Status depth_to_space(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  XOPT_ASSIGN_OR_RETURN(int64_t b, block_size(ctx, *x));
  XOPT_ASSIGN_OR_RETURN(bool crd, crd_mode(ctx, ctx.opset() >= 11));
  const int64_t n = x->dims()[0], c = x->dims()[1], h = x->dims()[2], w = x->dims()[3];
  if (c % (b * b) != 0)
    return ctx.error("channels " + std::to_string(c) + " are not a multiple of blocksize^2");
  const int64_t cc = c / (b * b), hw = h * w;
  // Strides in x of the output channel, the block row and the block column.
  const int64_t sc = crd ? b * b * hw : hw;
  const int64_t sb1 = crd ? b * hw : b * cc * hw;
  const int64_t sb2 = crd ? hw : cc * hw;
  const std::vector<int64_t> view{n, cc, h, b, w, b};
  return emit_strided(ctx, *x, {n, cc, h * b, w * b}, {c * hw, sc, w, sb1, 1, sb2}, &view);
}

// DCR: x viewed as [n, c, h', b, w', b] -> [n, b, b, c, h', w']; CRD (28+): -> [n, c, b, b, h',
// w'].
Status space_to_depth(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  XOPT_ASSIGN_OR_RETURN(int64_t b, block_size(ctx, *x));
  XOPT_ASSIGN_OR_RETURN(bool crd, crd_mode(ctx, ctx.opset() >= 28));
  const int64_t n = x->dims()[0], c = x->dims()[1], h = x->dims()[2], w = x->dims()[3];
  if (h % b != 0 || w % b != 0)
    return ctx.error("spatial dims " + ir::dims_string(x->dims()) +
                     " are not multiples of blocksize " + std::to_string(b));
  const int64_t hh = h / b, ww = w / b, hw = h * w;
  std::vector<int64_t> view, strides;
  if (crd) {
    view = {n, c, b, b, hh, ww};
    strides = {c * hw, hw, w, 1, b * w, b};
  } else {
    view = {n, b, b, c, hh, ww};
    strides = {c * hw, w, 1, hw, b * w, b};
  }
  return emit_strided(ctx, *x, {n, c * b * b, hh, ww}, strides, &view);
}

}  // namespace

XOPT_CPU_KERNEL("", "DepthToSpace", 1, kLatestOpset, depth_to_space);
XOPT_CPU_KERNEL("", "SpaceToDepth", 1, kLatestOpset, space_to_depth);

}  // namespace xopt::exec
