// CumSum along one axis; `exclusive` leaves out the element itself, `reverse` sums from the end.
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

Status cumsum(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "x"));
  XOPT_ASSIGN_OR_RETURN(auto axis_v, int_input(ctx, 1, "axis"));
  if (axis_v.size() != 1) return ctx.error("axis must be a scalar");
  XOPT_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(ctx, axis_v[0], static_cast<int64_t>(x->rank())));
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_int("reverse", 0) != 0;
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = product(x->dims(), 0, a), n = x->dims()[a],
                inner = product(x->dims(), a + 1, x->rank());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), x->dims()));
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = x->data<T>();
    T* dst = y->mutable_data<T>();
    std::vector<C> acc(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      std::fill(acc.begin(), acc.end(), C{0});
      for (int64_t k = 0; k < n; ++k) {
        const int64_t kk = reverse ? n - 1 - k : k;
        const T* s = src + (o * n + kk) * inner;
        T* t = dst + (o * n + kk) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          C v = to_compute(s[i]);
          if (exclusive) {
            t[i] = from_compute<T>(acc[static_cast<size_t>(i)]);
            acc[static_cast<size_t>(i)] += v;
          } else {
            acc[static_cast<size_t>(i)] += v;
            t[i] = from_compute<T>(acc[static_cast<size_t>(i)]);
          }
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "CumSum", 11, kLatestOpset, cumsum);

}  // namespace xopt::exec
