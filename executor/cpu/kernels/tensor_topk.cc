// TopK: the k largest (or smallest) elements along an axis and their indices. Equal values keep
// their input order (the lower index first), so the result is deterministic.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

Status topk(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "X"));
  int64_t k;
  if (ctx.opset() < 10) {
    if (!ctx.node().has_attr("k")) return ctx.error("attribute 'k' is required");
    k = ctx.node().attr_int("k", 0);
  } else {
    XOPT_ASSIGN_OR_RETURN(auto kv, int_input(ctx, 1, "K"));
    if (kv.size() != 1) return ctx.error("K must hold one value");
    k = kv[0];
  }
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", -1),
                                                     static_cast<int64_t>(x->rank())));
  const bool largest = ctx.opset() < 11 || ctx.node().attr_int("largest", 1) != 0;
  // sorted=0 leaves the order unspecified; the sorted order is one valid answer.
  const auto a = static_cast<size_t>(axis);
  const int64_t n = x->dims()[a];
  if (k < 0 || k > n)
    return ctx.error("k " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
  const int64_t outer = product(x->dims(), 0, a), inner = product(x->dims(), a + 1, x->rank());
  std::vector<int64_t> out_dims = x->dims();
  out_dims[a] = k;
  // Output 1 first: allocating it may grow the context's output list, which would move output 0.
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * indices, ctx.output(1, ir::DType::kInt64, out_dims));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * values, ctx.output(0, x->dtype(), out_dims));
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = x->data<T>();
    T* vals = values->mutable_data<T>();
    int64_t* idx = indices->mutable_data<int64_t>();
    std::vector<C> row(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(n));
    // NaN ranks above every number, which keeps the ordering strict-weak.
    auto greater = [](C a, C b) {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
      }
      return a > b;
    };
    auto before = [&](int64_t p, int64_t q) {
      const C vp = row[static_cast<size_t>(p)], vq = row[static_cast<size_t>(q)];
      const bool first = largest ? greater(vp, vq) : greater(vq, vp);
      const bool second = largest ? greater(vq, vp) : greater(vp, vq);
      return first || (!second && p < q);
    };
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* s = src + o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = to_compute(s[j * inner]);
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * inner + i;
          vals[at] = s[order[static_cast<size_t>(j)] * inner];
          idx[at] = order[static_cast<size_t>(j)];
        }
      }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "TopK", 1, kLatestOpset, topk);

}  // namespace xopt::exec
