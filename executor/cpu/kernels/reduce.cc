// Reduce* (Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare) over any set of axes,
// and ArgMax / ArgMin along one axis.
//
// Axes come from the attribute before ReduceSum-13 / the others' 18, from the optional input after;
// with no axes every axis is reduced, unless noop_with_empty_axes asks for none (then each output
// element is the reduction of one element, as in the ONNX reference: L1 gives |x|, SumSquare x^2).
// Reducing zero elements gives the identity: 0 for sums, 1 for Prod, the lowest value for Max,
// the highest for Min, -inf for LogSum(Exp).
#include <cmath>
#include <limits>

#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

enum class Op { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The input dims merged into runs that are all reduced or all kept (size-1 dims dropped).
struct Groups {
  std::vector<int64_t> size;
  std::vector<bool> reduced;
};

// Calls f(in_offset, out_offset, n, reduced) for every run of the innermost group: n consecutive
// input elements that go to one output element (reduced) or to n consecutive ones (kept).
template <typename F>
void for_each_run(const Groups& g, F&& f) {
  const size_t rank = g.size.size();
  if (rank == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{1}, true);
    return;
  }
  std::vector<int64_t> out_stride(rank, 0);
  int64_t s = 1;
  for (size_t i = rank; i-- > 0;) {
    if (!g.reduced[i]) {
      out_stride[i] = s;
      s *= g.size[i];
    }
  }
  const int64_t inner = g.size[rank - 1];
  const bool inner_reduced = g.reduced[rank - 1];
  const int64_t total = product(g.size);
  std::vector<int64_t> idx(rank, 0);
  int64_t out = 0;
  for (int64_t in = 0; in < total; in += inner) {
    f(in, out, inner, inner_reduced);
    for (size_t k = rank - 1; k-- > 0;) {
      out += out_stride[k];
      if (++idx[k] < g.size[k]) break;
      out -= out_stride[k] * g.size[k];
      idx[k] = 0;
    }
  }
}

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<compute_t<T>>;

// Accumulator: double for float types, 64-bit integers for integers, T itself for Max/Min.
template <typename T>
using acc_t = std::conditional_t<kIsFloat<T>, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T>
Status reduce_typed(KernelContext& ctx, Op op, const ir::Tensor& x, const Groups& g, int64_t count,
                    ir::Tensor* y) {
  using C = compute_t<T>;
  const T* src = x.data<T>();
  T* dst = y->mutable_data<T>();
  const auto n_out = static_cast<size_t>(y->numel());
  if (n_out == 0) return Status::ok();

  if (op == Op::kMax || op == Op::kMin) {
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> acc(n_out, op == Op::kMin ? 1 : 0);
      for_each_run(g, [&](int64_t in, int64_t out, int64_t n, bool red) {
        for (int64_t j = 0; j < n; ++j) {
          uint8_t& a = acc[static_cast<size_t>(red ? out : out + j)];
          a = op == Op::kMax ? (a | src[in + j]) : (a & src[in + j]);
        }
      });
      for (size_t i = 0; i < n_out; ++i) dst[i] = acc[i] != 0;
    } else {
      const bool mx = op == Op::kMax;
      C init;
      if constexpr (kIsFloat<T>)
        init = mx ? -INFINITY : INFINITY;
      else
        init = mx ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
      std::vector<C> acc(n_out, init);
      // NaN wins (numpy's maximum/minimum propagate it).
      auto step = [mx](C& a, C v) {
        if constexpr (kIsFloat<T>) {
          if (std::isnan(a)) return;
          if (std::isnan(v)) {
            a = v;
            return;
          }
        }
        if (mx ? v > a : v < a) a = v;
      };
      for_each_run(g, [&](int64_t in, int64_t out, int64_t n, bool red) {
        if (red) {
          C a = acc[static_cast<size_t>(out)];
          for (int64_t j = 0; j < n; ++j) step(a, to_compute(src[in + j]));
          acc[static_cast<size_t>(out)] = a;
        } else {
          for (int64_t j = 0; j < n; ++j)
            step(acc[static_cast<size_t>(out + j)], to_compute(src[in + j]));
        }
      });
      for (size_t i = 0; i < n_out; ++i) dst[i] = from_compute<T>(acc[i]);
    }
    return Status::ok();
  }

  if constexpr (std::is_same_v<T, bool>) {
    return ctx.unsupported("this reduction is not defined for bool");
  } else {
    using A = acc_t<T>;
    // LogSumExp shifts by the maximum so that exp never overflows.
    std::vector<double> shift;
    if (op == Op::kLogSumExp) {
      shift.assign(n_out, -INFINITY);
      for_each_run(g, [&](int64_t in, int64_t out, int64_t n, bool red) {
        for (int64_t j = 0; j < n; ++j) {
          double& m = shift[static_cast<size_t>(red ? out : out + j)];
          m = std::max(m, static_cast<double>(to_compute(src[in + j])));
        }
      });
      for (double& m : shift)
        if (!std::isfinite(m)) m = 0;
    }
    std::vector<A> acc(n_out, op == Op::kProd ? A{1} : A{0});
    auto run = [&](auto term) {
      for_each_run(g, [&](int64_t in, int64_t out, int64_t n, bool red) {
        if (red) {
          A a = acc[static_cast<size_t>(out)];
          for (int64_t j = 0; j < n; ++j) a = term(a, to_compute(src[in + j]), out);
          acc[static_cast<size_t>(out)] = a;
        } else {
          for (int64_t j = 0; j < n; ++j) {
            A& a = acc[static_cast<size_t>(out + j)];
            a = term(a, to_compute(src[in + j]), out + j);
          }
        }
      });
    };
    switch (op) {
      case Op::kSum:
      case Op::kMean:
      case Op::kLogSum:
        run([](A a, C v, int64_t) { return a + static_cast<A>(v); });
        break;
      case Op::kProd:
        run([](A a, C v, int64_t) { return a * static_cast<A>(v); });
        break;
      case Op::kL1:
        run([](A a, C v, int64_t) {
          if constexpr (std::is_unsigned_v<C>)
            return a + static_cast<A>(v);
          else
            return a + static_cast<A>(v < 0 ? -v : v);
        });
        break;
      case Op::kL2:
      case Op::kSumSquare:
        run([](A a, C v, int64_t) { return a + static_cast<A>(v) * static_cast<A>(v); });
        break;
      case Op::kLogSumExp:
        run([&](A a, C v, int64_t o) {
          return a +
                 static_cast<A>(std::exp(static_cast<double>(v) - shift[static_cast<size_t>(o)]));
        });
        break;
      default:
        break;
    }
    for (size_t i = 0; i < n_out; ++i) {
      const A a = acc[i];
      switch (op) {
        case Op::kMean:
          if constexpr (kIsFloat<T>)
            dst[i] = from_compute<T>(a / static_cast<double>(count));
          else
            dst[i] = count == 0
                         ? T{0}
                         : static_cast<T>(static_cast<double>(a) / static_cast<double>(count));
          break;
        case Op::kL2:
          dst[i] = from_compute<T>(std::sqrt(static_cast<double>(a)));
          break;
        case Op::kLogSum:
          dst[i] = from_compute<T>(std::log(static_cast<double>(a)));
          break;
        case Op::kLogSumExp:
          dst[i] = from_compute<T>(std::log(static_cast<double>(a)) + shift[i]);
          break;
        default:
          dst[i] = from_compute<T>(a);
          break;
      }
    }
    return Status::ok();
  }
}

Status reduce(KernelContext& ctx, Op op, int axes_input_since) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  const bool keepdims = ctx.node().attr_int("keepdims", 1) != 0;
  const bool axes_from_input = ctx.opset() >= axes_input_since;
  const bool noop = axes_from_input && ctx.node().attr_int("noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (has_input(ctx, 1)) {
      XOPT_ASSIGN_OR_RETURN(axes, int_input(ctx, 1, "axes"));
    }
  } else {
    axes = ctx.node().attr_ints("axes");
  }
  const size_t rank = x->rank();
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  for (int64_t a : axes) {
    XOPT_ASSIGN_OR_RETURN(int64_t n,
                          normalize_axis(ctx, a, static_cast<int64_t>(rank), "axes entry"));
    reduced[static_cast<size_t>(n)] = true;
  }
  std::vector<int64_t> out_dims;
  Groups g;
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = x->dims()[i];
    if (reduced[i]) count *= d;
    if (!reduced[i])
      out_dims.push_back(d);
    else if (keepdims)
      out_dims.push_back(1);
    if (d == 1) continue;
    if (!g.size.empty() && g.reduced.back() == reduced[i]) {
      g.size.back() *= d;
    } else {
      g.size.push_back(d);
      g.reduced.push_back(reduced[i]);
    }
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), out_dims));
  auto body = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return reduce_typed<T>(ctx, op, *x, g, count, y);
  };
  if (op == Op::kMax || op == Op::kMin) return dispatch_all(x->dtype(), body);
  return dispatch_numeric(x->dtype(), body);
}

// ArgMax / ArgMin: the index of the first (or, with select_last_index, last) extreme element.
Status arg_extreme(KernelContext& ctx, bool is_max) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 0),
                                                     static_cast<int64_t>(x->rank())));
  const bool keepdims = ctx.node().attr_int("keepdims", 1) != 0;
  const bool last = ctx.opset() >= 12 && ctx.node().attr_int("select_last_index", 0) != 0;
  const auto a = static_cast<size_t>(axis);
  const int64_t n = x->dims()[a];
  const int64_t outer = product(x->dims(), 0, a), inner = product(x->dims(), a + 1, x->rank());
  std::vector<int64_t> out_dims = x->dims();
  if (keepdims)
    out_dims[a] = 1;
  else
    out_dims.erase(out_dims.begin() + axis);
  if (n == 0 && outer * inner > 0) return ctx.error("cannot take the arg-extreme of an empty axis");
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, ir::DType::kInt64, out_dims));
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* src = x->data<T>();
    int64_t* dst = y->mutable_data<int64_t>();
    // Strictly better, or (select_last_index) equally good. NaN counts as the extreme (numpy).
    auto takes = [&](C v, C best) {
      if constexpr (kIsFloat<T>) {
        if (std::isnan(best)) return last && std::isnan(v);
        if (std::isnan(v)) return true;
      }
      if (is_max ? v > best : v < best) return true;
      return last && v == best;
    };
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* s = src + o * n * inner + i;
        C best = to_compute(s[0]);
        int64_t at = 0;
        for (int64_t j = 1; j < n; ++j) {
          C v = to_compute(s[j * inner]);
          if (takes(v, best)) best = v, at = j;
        }
        dst[o * inner + i] = at;
      }
    return Status::ok();
  });
}

Status reduce_sum(KernelContext& c) {
  return reduce(c, Op::kSum, 13);
}
Status reduce_mean(KernelContext& c) {
  return reduce(c, Op::kMean, 18);
}
Status reduce_max(KernelContext& c) {
  return reduce(c, Op::kMax, 18);
}
Status reduce_min(KernelContext& c) {
  return reduce(c, Op::kMin, 18);
}
Status reduce_prod(KernelContext& c) {
  return reduce(c, Op::kProd, 18);
}
Status reduce_l1(KernelContext& c) {
  return reduce(c, Op::kL1, 18);
}
Status reduce_l2(KernelContext& c) {
  return reduce(c, Op::kL2, 18);
}
Status reduce_log_sum(KernelContext& c) {
  return reduce(c, Op::kLogSum, 18);
}
Status reduce_log_sum_exp(KernelContext& c) {
  return reduce(c, Op::kLogSumExp, 18);
}
Status reduce_sum_square(KernelContext& c) {
  return reduce(c, Op::kSumSquare, 18);
}
Status arg_max(KernelContext& c) {
  return arg_extreme(c, true);
}
Status arg_min(KernelContext& c) {
  return arg_extreme(c, false);
}

}  // namespace

XOPT_CPU_KERNEL("", "ReduceSum", 1, kLatestOpset, reduce_sum);
XOPT_CPU_KERNEL("", "ReduceMean", 1, kLatestOpset, reduce_mean);
XOPT_CPU_KERNEL("", "ReduceMax", 1, kLatestOpset, reduce_max);
XOPT_CPU_KERNEL("", "ReduceMin", 1, kLatestOpset, reduce_min);
XOPT_CPU_KERNEL("", "ReduceProd", 1, kLatestOpset, reduce_prod);
XOPT_CPU_KERNEL("", "ReduceL1", 1, kLatestOpset, reduce_l1);
XOPT_CPU_KERNEL("", "ReduceL2", 1, kLatestOpset, reduce_l2);
XOPT_CPU_KERNEL("", "ReduceLogSum", 1, kLatestOpset, reduce_log_sum);
XOPT_CPU_KERNEL("", "ReduceLogSumExp", 1, kLatestOpset, reduce_log_sum_exp);
XOPT_CPU_KERNEL("", "ReduceSumSquare", 1, kLatestOpset, reduce_sum_square);
XOPT_CPU_KERNEL("", "ArgMax", 1, kLatestOpset, arg_max);
XOPT_CPU_KERNEL("", "ArgMin", 1, kLatestOpset, arg_min);

}  // namespace xopt::exec
