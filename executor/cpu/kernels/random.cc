// The random generators: RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike,
// Bernoulli and Multinomial. With a `seed` attribute every run draws the same values (a generator
// seeded from the seed's bits); without one each run draws fresh ones, as the spec allows. The
// values are not numpy's: ONNX's tests of these ops check shape, type and range
// (executor/cpu/conformance.h).
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

std::mt19937_64 generator(const ir::Node& n) {
  if (!n.has_attr("seed")) return std::mt19937_64(std::random_device{}());
  const float seed = n.attr_float("seed", 0.f);
  uint32_t bits = 0;
  std::memcpy(&bits, &seed, sizeof bits);
  return std::mt19937_64(bits);
}

bool is_float_type(ir::DType t) {
  return t == ir::DType::kFloat16 || t == ir::DType::kBFloat16 || t == ir::DType::kFloat ||
         t == ir::DType::kDouble;
}

// Output 0 of `dims` and type `dtype` filled from uniform [low, high) or normal(mean, scale).
Status fill(KernelContext& ctx, ir::DType dtype, const std::vector<int64_t>& dims, bool normal) {
  if (!is_float_type(dtype))
    return ctx.error(std::string("dtype must be a floating type, got ") +
                     std::string(ir::dtype_name(dtype)));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, dtype, dims));
  std::vector<double> v(static_cast<size_t>(y->numel()));
  std::mt19937_64 gen = generator(ctx.node());
  if (normal) {
    std::normal_distribution<double> d(ctx.node().attr_float("mean", 0.f),
                                       ctx.node().attr_float("scale", 1.f));
    for (double& x : v) x = d(gen);
  } else {
    const double low = ctx.node().attr_float("low", 0.f), high = ctx.node().attr_float("high", 1.f);
    if (!(low <= high)) return ctx.error("low must not exceed high");
    std::uniform_real_distribution<double> d(low, high);
    for (double& x : v) x = d(gen);
  }
  return store(v, y);
}

template <bool kNormal>
Status random(KernelContext& ctx) {
  const std::vector<int64_t> dims = ctx.node().attr_ints("shape");
  for (int64_t d : dims)
    if (d < 0) return ctx.error("shape has a negative dim");
  return fill(ctx, static_cast<ir::DType>(ctx.node().attr_int("dtype", 1)), dims, kNormal);
}

template <bool kNormal>
Status random_like(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const ir::DType t = ctx.node().has_attr("dtype")
                          ? static_cast<ir::DType>(ctx.node().attr_int("dtype", 1))
                          : x->dtype();
  return fill(ctx, t, x->dims(), kNormal);
}

// y[i] = 1 with probability x[i] (x outside [0, 1] is an error, as numpy's binomial).
Status bernoulli(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  const ir::DType t = ctx.node().has_attr("dtype")
                          ? static_cast<ir::DType>(ctx.node().attr_int("dtype", 1))
                          : x->dtype();
  const std::vector<double> p = doubles(*x);
  std::vector<double> v(p.size());
  std::mt19937_64 gen = generator(ctx.node());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (size_t i = 0; i < p.size(); ++i) {
    if (!(p[i] >= 0.0 && p[i] <= 1.0))
      return ctx.error("probability " + std::to_string(p[i]) + " at element " + std::to_string(i) +
                       " is outside [0, 1]");
    v[i] = u(gen) < p[i] ? 1.0 : 0.0;
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, t, x->dims()));
  return store(v, y);
}

// Multinomial: `sample_size` class indices per row, drawn from softmax(row) (the input holds
// unnormalised log-probabilities).
Status multinomial(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input is required");
  if (x->rank() != 2) return ctx.error("input must be [batch_size, class_size]");
  const int64_t samples = ctx.node().attr_int("sample_size", 1);
  if (samples < 1) return ctx.error("sample_size must be at least 1");
  const auto t = static_cast<ir::DType>(ctx.node().attr_int("dtype", 6));
  if (t != ir::DType::kInt32 && t != ir::DType::kInt64)
    return ctx.error("dtype must be int32 or int64");
  const int64_t batch = x->dims()[0], classes = x->dims()[1];
  if (classes < 1) return ctx.error("class_size must be at least 1");
  const std::vector<double> logits = doubles(*x);
  std::vector<double> v(static_cast<size_t>(batch * samples));
  std::mt19937_64 gen = generator(ctx.node());
  std::vector<double> w(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    double top = -INFINITY;
    for (int64_t c = 0; c < classes; ++c)
      top = std::max(top, logits[static_cast<size_t>(b * classes + c)]);
    for (int64_t c = 0; c < classes; ++c)
      w[static_cast<size_t>(c)] = std::exp(logits[static_cast<size_t>(b * classes + c)] - top);
    std::discrete_distribution<int64_t> d(w.begin(), w.end());
    for (int64_t s = 0; s < samples; ++s)
      v[static_cast<size_t>(b * samples + s)] = static_cast<double>(d(gen));
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, t, {batch, samples}));
  return store(v, y);
}

}  // namespace

XOPT_CPU_KERNEL("", "RandomUniform", 1, kLatest, random<false>);
XOPT_CPU_KERNEL("", "RandomNormal", 1, kLatest, random<true>);
XOPT_CPU_KERNEL("", "RandomUniformLike", 1, kLatest, random_like<false>);
XOPT_CPU_KERNEL("", "RandomNormalLike", 1, kLatest, random_like<true>);
XOPT_CPU_KERNEL("", "Bernoulli", 15, kLatest, bernoulli);
XOPT_CPU_KERNEL("", "Multinomial", 7, kLatest, multinomial);

}  // namespace xopt::exec::ops
