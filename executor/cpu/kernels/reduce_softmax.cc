// Softmax and LogSoftmax, shifted by the maximum so exp never overflows. Before opset 13 the input
// is coerced to 2-D at `axis` (default 1) and each row of the flattened trailing dims is
// normalised; from 13 only the one `axis` (default -1) is.
#include <algorithm>
#include <cmath>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

template <typename T>
void softmax_rows(const T* src, T* dst, int64_t outer, int64_t n, int64_t inner, bool log,
                  std::vector<compute_t<T>>& buf) {
  using C = compute_t<T>;
  buf.resize(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* s = src + o * n * inner + i;
      T* t = dst + o * n * inner + i;
      C mx = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        C v = to_compute(s[j * inner]);
        buf[static_cast<size_t>(j)] = v;
        if (v > mx) mx = v;
      }
      // Shifted values (x - max) keep full precision for LogSoftmax of large inputs. An all -inf
      // row gives NaN (0/0), as the reference does.
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        C& b = buf[static_cast<size_t>(j)];
        b -= mx;
        C e = std::exp(b);
        sum += static_cast<double>(e);
        if (!log) b = e;
      }
      if (log) {
        const C lse = static_cast<C>(std::log(sum));
        for (int64_t j = 0; j < n; ++j)
          t[j * inner] = from_compute<T>(buf[static_cast<size_t>(j)] - lse);
      } else {
        const C scale = static_cast<C>(1.0 / sum);
        for (int64_t j = 0; j < n; ++j)
          t[j * inner] = from_compute<T>(buf[static_cast<size_t>(j)] * scale);
      }
    }
}

Status softmax_impl(KernelContext& ctx, bool log) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  const auto rank = static_cast<int64_t>(x->rank());
  const bool coerce = ctx.opset() < 13;
  int64_t axis = ctx.node().attr_int("axis", coerce ? 1 : -1);
  // Before 13, axis may equal the rank (the row is then empty of dims, i.e. one element).
  if (coerce && axis == rank) {
    axis = rank;
  } else if (rank == 0) {
    axis = 0;
  } else {
    XOPT_ASSIGN_OR_RETURN(axis, normalize_axis(ctx, axis, rank));
  }
  const auto a = static_cast<size_t>(axis);
  int64_t outer, n, inner;
  if (coerce) {
    outer = product(x->dims(), 0, a);
    n = product(x->dims(), a, x->rank());
    inner = 1;
  } else if (rank == 0) {
    outer = n = inner = 1;
  } else {
    outer = product(x->dims(), 0, a);
    n = x->dims()[a];
    inner = product(x->dims(), a + 1, x->rank());
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x->dtype(), x->dims()));
  if (x->numel() == 0) return Status::ok();
  return dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // Blocks of `outer` are independent: split them across the intra-op threads.
    const T* xd = x->data<T>();
    T* yd = y->mutable_data<T>();
    parallel_for(outer, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n * inner)),
                 [&](int64_t lo, int64_t hi) {
                   std::vector<compute_t<T>> buf;
                   softmax_rows<T>(xd + lo * n * inner, yd + lo * n * inner, hi - lo, n, inner, log,
                                   buf);
                 });
    return Status::ok();
  });
}

Status softmax(KernelContext& ctx) {
  return softmax_impl(ctx, false);
}
Status log_softmax(KernelContext& ctx) {
  return softmax_impl(ctx, true);
}

}  // namespace

XOPT_CPU_KERNEL("", "Softmax", 1, kLatestOpset, softmax);
XOPT_CPU_KERNEL("", "LogSoftmax", 1, kLatestOpset, log_softmax);

}  // namespace xopt::exec
