// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims, zeroes
// the rest.
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

Status trilu(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  if (x->rank() < 2) return ctx.error("input must have rank >= 2");
  int64_t k = 0;
  if (has_input(ctx, 1)) {
    XOPT_ASSIGN_OR_RETURN(auto kv, int_input(ctx, 1, "k"));
    if (kv.size() != 1) return ctx.error("k must be a scalar");
    k = kv[0];
  }
  const bool upper = ctx.node().attr_int("upper", 1) != 0;
  const int64_t rows = x->dims()[x->rank() - 2], cols = x->dims()[x->rank() - 1];
  const int64_t batch = product(x->dims(), 0, x->rank() - 2);
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), x->dims()));
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const U* src = elems<U>(*x);
    U* dst = mutable_elems<U>(*y);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t off = (b * rows + i) * cols;
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = upper ? j - i >= k : j - i <= k;
          dst[off + j] = keep ? src[off + j] : U{};
        }
      }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Trilu", 14, kLatestOpset, trilu);

}  // namespace xopt::exec
