// RotaryEmbedding (opset 23): X [B, H, S, D] or [B, S, H*D] (num_heads); cos_cache / sin_cache
// [max_pos, R/2] indexed by position_ids [B, S], or [B, S, R/2] without position_ids; the first R
// (rotary_embedding_dim, default D) features of each head rotate, as halves (x1 = x[:R/2],
// x2 = x[R/2:R]) or interleaved (x1 = x[0::2], x2 = x[1::2]):
//   x1' = cos * x1 - sin * x2,  x2' = sin * x1 + cos * x2.
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

Status rotary_embedding(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* cos_t = ctx.input(1);
  const ir::Tensor* sin_t = ctx.input(2);
  const ir::Tensor* pos = ctx.input(3);
  if (x == nullptr || cos_t == nullptr || sin_t == nullptr)
    return ctx.error("X, cos_cache and sin_cache are required");
  const auto& xd = x->dims();
  int64_t b, s, h, d;
  if (xd.size() == 4) {
    b = xd[0];
    h = xd[1];
    s = xd[2];
    d = xd[3];
  } else if (xd.size() == 3) {
    h = ctx.node().attr_int("num_heads", 0);
    if (h <= 0 || xd[2] % h != 0)
      return ctx.error("3-D input needs num_heads dividing its hidden size");
    b = xd[0];
    s = xd[1];
    d = xd[2] / h;
  } else {
    return ctx.error("X must be 3-D or 4-D, got " + ir::dims_string(xd));
  }
  int64_t r = ctx.node().attr_int("rotary_embedding_dim", 0);
  if (r == 0) r = d;
  if (r > d || r % 2 != 0) return ctx.error("rotary_embedding_dim must be even and <= head size");
  const int64_t half = r / 2;
  const bool interleaved = ctx.node().attr_int("interleaved", 0) != 0;
  if (cos_t->dims() != sin_t->dims() || cos_t->dims().empty() || cos_t->dims().back() != half)
    return ctx.error("cos_cache " + ir::dims_string(cos_t->dims()) + " / sin_cache " +
                     ir::dims_string(sin_t->dims()) +
                     " must end in rotary_embedding_dim / 2 = " + std::to_string(half));
  std::vector<int64_t> positions;
  if (pos != nullptr) {
    positions = pos->to_int64_vector();
    if (static_cast<int64_t>(positions.size()) != b * s || cos_t->rank() != 2)
      return ctx.error("position_ids must be [B, S] and the caches 2-D");
    for (int64_t p : positions)
      if (p < 0 || p >= cos_t->dims()[0])
        return ctx.error("position id " + std::to_string(p) + " is outside the caches");
  } else if (cos_t->rank() != 3 || cos_t->dims()[0] != b || cos_t->dims()[1] != s) {
    return ctx.error("without position_ids the caches must be [B, S, R/2]");
  }
  const std::vector<double> xv = doubles(*x), cv = doubles(*cos_t), sv = doubles(*sin_t);
  std::vector<double> y = xv;
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t si = 0; si < s; ++si) {
      const int64_t row =
          pos != nullptr ? positions[static_cast<size_t>(bi * s + si)] : bi * s + si;
      const double* cr = cv.data() + row * half;
      const double* sr = sv.data() + row * half;
      for (int64_t hi = 0; hi < h; ++hi) {
        const int64_t base =
            xd.size() == 4 ? ((bi * h + hi) * s + si) * d : ((bi * s + si) * h + hi) * d;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = base + (interleaved ? 2 * k : k);
          const int64_t i2 = base + (interleaved ? 2 * k + 1 : k + half);
          const double x1 = xv[static_cast<size_t>(i1)], x2 = xv[static_cast<size_t>(i2)];
          y[static_cast<size_t>(i1)] = cr[k] * x1 - sr[k] * x2;
          y[static_cast<size_t>(i2)] = sr[k] * x1 + cr[k] * x2;
        }
      }
    }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * yt, ctx.output_uninit(0, x->dtype(), xd));
  return store(y, yt);
}

}  // namespace

XOPT_CPU_KERNEL("", "RotaryEmbedding", 23, kLatest, rotary_embedding);

}  // namespace xopt::exec::ops
