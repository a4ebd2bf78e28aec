// Helpers for the elementwise kernels (elementwise_*.cc): per-element maps with numpy broadcasting,
// wrapping integer arithmetic and value conversion between every dtype.
//
// Half types (float16, bfloat16) are computed in float and rounded once on store. Integer
// arithmetic wraps (two's complement) instead of invoking C++'s undefined signed overflow. Each
// output element is written after reading the inputs of that index, so an output may alias an
// input of its own shape (in-place, when a memory plan says so).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "executor/cpu/broadcast.h"
#include "executor/cpu/dispatch.h"
#include "executor/cpu/kernel.h"
#include "executor/cpu/parallel.h"
#include "ir/tensor.h"

namespace xopt::exec::ew {

// Last opset of the schema history (onnx 1.23) up to which an op with no later revision keeps its
// meaning.
inline constexpr int kLastOpset = 28;

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, ir::Float16> || std::is_same_v<T, ir::BFloat16>;
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

// The unsigned type wrapping arithmetic on T is done in (at least unsigned int, so that small types
// are not promoted to signed int, whose overflow is undefined).
template <typename T>
using wrap_t =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename C>
inline C add(C a, C b) {
  if constexpr (is_int_v<C>)
    return static_cast<C>(static_cast<wrap_t<C>>(a) + static_cast<wrap_t<C>>(b));
  else
    return a + b;
}
template <typename C>
inline C sub(C a, C b) {
  if constexpr (is_int_v<C>)
    return static_cast<C>(static_cast<wrap_t<C>>(a) - static_cast<wrap_t<C>>(b));
  else
    return a - b;
}
template <typename C>
inline C mul(C a, C b) {
  if constexpr (is_int_v<C>)
    return static_cast<C>(static_cast<wrap_t<C>>(a) * static_cast<wrap_t<C>>(b));
  else
    return a * b;
}
// Integer division truncates toward zero like C; x / 0 gives 0 and MIN / -1 wraps to MIN.
template <typename C>
inline C div(C a, C b) {
  if constexpr (is_int_v<C>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>)
      if (b == -1) return static_cast<C>(wrap_t<C>(0) - static_cast<wrap_t<C>>(a));
    return static_cast<C>(a / b);
  } else {
    return a / b;
  }
}

// Converts one value between element types (the compute types: float for the half types).
// float -> integer truncates toward zero, NaN gives 0, and goes through int64 (saturating) then
// wraps to narrower types like numpy on x86; narrowing integer conversions wrap; anything -> bool
// is "!= 0" (NaN is true).
template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_int_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return 0;
    // Through int64 so that negative values reach unsigned targets modulo 2^N, like numpy.
    if constexpr (std::is_same_v<To, uint64_t>) {
      if (v >= 18446744073709551615.0) return std::numeric_limits<uint64_t>::max();
      if (v >= 9223372036854775808.0) return static_cast<uint64_t>(v);
    }
    int64_t i;
    if (v >= 9223372036854775807.0)
      i = std::numeric_limits<int64_t>::max();
    else if (v <= -9223372036854775808.0)
      i = std::numeric_limits<int64_t>::min();
    else
      i = static_cast<int64_t>(v);
    return static_cast<To>(i);  // wraps for narrower types (C++20 modular conversion)
  } else {
    return static_cast<To>(v);
  }
}

// Stores compute value `v` as element type T.
template <typename T, typename C>
inline T store(C v) {
  if constexpr (std::is_same_v<T, ir::Float16>)
    return ir::Float16{ir::float_to_half(convert<float>(v))};
  else if constexpr (std::is_same_v<T, ir::BFloat16>)
    return ir::BFloat16{ir::float_to_bfloat16(convert<float>(v))};
  else
    return convert<T>(v);
}

// Elements per chunk when an elementwise loop is split across the intra-op threads.
inline constexpr int64_t kParallelGrain = 16384;

// y[i] = f(x[i]) for i < n; x and y do not overlap (so the loop vectorizes).
template <typename TI, typename TO, typename F>
inline void unary_run(const TI* __restrict x, TO* __restrict y, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) y[i] = store<TO>(f(to_compute(x[i])));
}

// y[i] = f(a[i * sa], b[i * sb]) for i < n, with the common strides (1 or 0) spelled out so those
// loops vectorize.
template <typename TA, typename TB, typename TO, typename F>
inline void binary_run(const TA* __restrict a, int64_t sa, const TB* __restrict b, int64_t sb,
                       TO* __restrict y, int64_t n, const F& f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = store<TO>(f(to_compute(a[i]), to_compute(b[i])));
  } else if (sa == 1 && sb == 0) {
    const auto bv = to_compute(b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = store<TO>(f(to_compute(a[i]), bv));
  } else if (sa == 0 && sb == 1) {
    const auto av = to_compute(a[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = store<TO>(f(av, to_compute(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i)
      y[i] = store<TO>(f(to_compute(a[i * sa]), to_compute(b[i * sb])));
  }
}

// y[i] = f(x[i]) in compute types; y has x's dims and dtype `out`. Split across the intra-op
// threads; f must not keep state between calls.
template <typename TI, typename TO, typename F>
Status map_unary(KernelContext& ctx, const ir::Tensor& x, ir::DType out, F&& f) {
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, x.dims()));
  const TI* px = x.data<TI>();
  TO* py = y->mutable_data<TO>();
  const bool in_place = static_cast<const void*>(px) == static_cast<const void*>(py);
  parallel_for(x.numel(), kParallelGrain, [&](int64_t lo, int64_t hi) {
    if (in_place) {
      for (int64_t i = lo; i < hi; ++i) py[i] = store<TO>(f(to_compute(px[i])));
    } else {
      unary_run(px + lo, py + lo, hi - lo, f);
    }
  });
  return Status::ok();
}

// y = f(a, b) with numpy broadcasting, in compute types; y gets dtype `out`. Split across the
// intra-op threads; f must not keep state between calls.
template <typename TA, typename TB, typename TO, typename F>
Status map_binary(KernelContext& ctx, const ir::Tensor& a, const ir::Tensor& b, ir::DType out,
                  F&& f) {
  auto dims = broadcast_shapes({a.dims(), b.dims()});
  if (!dims.is_ok()) return ctx.error(dims.status().message());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, out, *dims));
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* py = y->mutable_data<TO>();
  // In place (the output shares an input's bytes): element i is read before it is written.
  const bool in_place = static_cast<const void*>(pa) == static_cast<const void*>(py) ||
                        static_cast<const void*>(pb) == static_cast<const void*>(py);
  const BroadcastPlan plan = make_broadcast_plan(*dims, {a.dims(), b.dims()});
  parallel_for(plan.numel, kParallelGrain, [&](int64_t lo, int64_t hi) {
    for_each_broadcast_run(
        plan, lo, hi, [&](int64_t i, int64_t len, const int64_t* off, const int64_t* step) {
          if (in_place) {
            for (int64_t j = 0; j < len; ++j)
              py[i + j] = store<TO>(
                  f(to_compute(pa[off[0] + j * step[0]]), to_compute(pb[off[1] + j * step[1]])));
          } else {
            binary_run(pa + off[0], step[0], pb + off[1], step[1], py + i, len, f);
          }
        });
  });
  return Status::ok();
}

// Input i, or an error when it is omitted.
inline Result<const ir::Tensor*> required_input(const KernelContext& ctx, size_t i) {
  if (ctx.input(i) == nullptr) return ctx.error("input " + std::to_string(i) + " is missing");
  return ctx.input(i);
}

// The present inputs (ignores omitted optional ones), or an error when fewer than `min` are given.
inline Result<std::vector<const ir::Tensor*>> present_inputs(const KernelContext& ctx, size_t min) {
  std::vector<const ir::Tensor*> v;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.input(i) != nullptr) v.push_back(ctx.input(i));
  if (v.size() < min)
    return ctx.error("needs at least " + std::to_string(min) + " input(s), got " +
                     std::to_string(v.size()));
  return v;
}

// Checks that every tensor in `ts` has the dtype of the first.
inline Status same_dtype(const KernelContext& ctx, const std::vector<const ir::Tensor*>& ts) {
  for (size_t i = 1; i < ts.size(); ++i)
    if (ts[i]->dtype() != ts[0]->dtype())
      return ctx.error("input " + std::to_string(i) + " is " +
                       std::string(ir::dtype_name(ts[i]->dtype())) + " but input 0 is " +
                       std::string(ir::dtype_name(ts[0]->dtype())));
  return Status::ok();
}

// Inputs of binary ops before opset 7 used "legacy" broadcasting: B is broadcast onto A only when
// the attribute broadcast=1, aligned at `axis` (default: trailing). Returns B's dims rewritten to
// A's rank for numpy broadcasting, or an error.
inline Result<std::vector<int64_t>> legacy_broadcast_dims(const KernelContext& ctx,
                                                          const std::vector<int64_t>& a,
                                                          const std::vector<int64_t>& b) {
  if (ctx.opset() >= 7) return b;
  if (ctx.node().attr_int("broadcast", 0) == 0) {
    if (a != b)
      return ctx.error("shapes " + ir::dims_string(a) + " and " + ir::dims_string(b) +
                       " differ and broadcast=0");
    return b;
  }
  if (b.size() > a.size())
    return ctx.error("B " + ir::dims_string(b) + " has a higher rank than A " + ir::dims_string(a));
  int64_t axis = ctx.node().attr_int("axis", static_cast<int64_t>(a.size() - b.size()));
  if (axis < 0) axis += static_cast<int64_t>(a.size());
  if (axis < 0 || axis + static_cast<int64_t>(b.size()) > static_cast<int64_t>(a.size()))
    return ctx.error("axis " + std::to_string(axis) + " does not fit B " + ir::dims_string(b) +
                     " into A " + ir::dims_string(a));
  std::vector<int64_t> out(a.size(), 1);
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] != a[static_cast<size_t>(axis) + i] && b[i] != 1)
      return ctx.error("B " + ir::dims_string(b) + " does not match A " + ir::dims_string(a) +
                       " at axis " + std::to_string(axis));
    out[static_cast<size_t>(axis) + i] = b[i];
  }
  return out;
}

}  // namespace xopt::exec::ew
