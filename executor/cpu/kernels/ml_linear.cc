// The linear ops of ai.onnx.ml (opset 1), as scikit-learn's exporter (skl2onnx) writes them:
//   Scaler                 Y = (X - offset) * scale, per feature (last axis) or one value
//   ArrayFeatureExtractor  Z = X[..., Y] (indices on the last axis; a 1-D X gives [1, len(Y)])
//   LinearRegressor        Y = X W^T + b  [N, targets], then post_transform
//   LinearClassifier       scores = X W^T + b; label = the best class (binary: score > 0), scores
//                          post-transformed
// Inputs of float, double, int64 or int32 are read as float, outputs are float (labels int64 or
// string), computed in float as onnxruntime does (its ml_common.h), including its post-transform
// formulas: PROBIT through the 0.147 inverse-erf approximation, SOFTMAX_ZERO leaving zeros out,
// and the binary classifier's second class (one score, two labels: [1 - score, score], the
// transform not applied; with PROBIT, where onnxruntime leaves half the scores unwritten, an
// error).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"

namespace xopt::exec::ops {
namespace {

enum class Transform { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

Result<Transform> transform_of(const KernelContext& ctx) {
  const std::string t = ctx.node().attr_string("post_transform", "NONE");
  if (t == "NONE") return Transform::kNone;
  if (t == "SOFTMAX") return Transform::kSoftmax;
  if (t == "LOGISTIC") return Transform::kLogistic;
  if (t == "SOFTMAX_ZERO") return Transform::kSoftmaxZero;
  if (t == "PROBIT") return Transform::kProbit;
  return ctx.error("unknown post_transform '" + t +
                   "' (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT)");
}

float erf_inv(float x) {
  const float sgn = x < 0 ? -1.0f : 1.0f;
  x = (1 - x) * (1 + x);
  const float log = std::log(x);
  const float v = 2 / (static_cast<float>(M_PI) * 0.147f) + 0.5f * log;
  const float v2 = 1 / 0.147f * log;
  const float v3 = -v + std::sqrt(v * v - v2);
  return sgn * std::sqrt(v3);
}
float probit(float v) {
  return static_cast<float>(M_SQRT2) * erf_inv(2 * v - 1);
}
float logistic(float v) {
  const float e = 1 / (1 + std::exp(-std::abs(v)));
  return v < 0 ? 1 - e : e;
}

void softmax(float* s, int64_t n, bool skip_zeros) {
  float mx = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, s[i]);
  const float exp_neg_max = std::exp(-mx);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (skip_zeros && s[i] <= 1e-7f && s[i] >= -1e-7f) {
      s[i] *= exp_neg_max;
    } else {
      s[i] = std::exp(s[i] - mx);
      sum += s[i];
    }
  }
  for (int64_t i = 0; i < n; ++i) s[i] /= sum;
}

// Rows of `width` scores, transformed in place. A row of one score takes PROBIT only.
void post_transform(std::vector<float>& s, int64_t rows, int64_t width, Transform t) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s.data() + r * width;
    if (width == 1) {
      if (t == Transform::kProbit) row[0] = probit(row[0]);
      continue;
    }
    switch (t) {
      case Transform::kProbit:
        for (int64_t i = 0; i < width; ++i) row[i] = probit(row[i]);
        break;
      case Transform::kLogistic:
        for (int64_t i = 0; i < width; ++i) row[i] = logistic(row[i]);
        break;
      case Transform::kSoftmax:
        softmax(row, width, false);
        break;
      case Transform::kSoftmaxZero:
        softmax(row, width, true);
        break;
      case Transform::kNone:
        break;
    }
  }
}

// X as float, with its batch and feature counts ([C] is one row of C).
struct Rows {
  std::vector<float> x;
  int64_t n = 0, c = 0;
};
Result<Rows> rows_of(const KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input X is required");
  const ir::DType t = x->dtype();
  if (t != ir::DType::kFloat && t != ir::DType::kDouble && t != ir::DType::kInt64 &&
      t != ir::DType::kInt32)
    return ctx.error("X must be float, double, int64 or int32");
  const auto& d = x->dims();
  if (d.empty() || d.size() > 2) return ctx.error("X must be [N, C] or [C]");
  Rows r;
  r.n = d.size() == 1 ? 1 : d[0];
  r.c = d.back();
  for (double v : doubles(*x)) r.x.push_back(static_cast<float>(v));
  return r;
}

// X W^T + b in float, W of `targets` rows of C.
Result<std::vector<float>> affine(const KernelContext& ctx, const Rows& r, int64_t targets) {
  const std::vector<float> w = ctx.node().attr_floats("coefficients");
  const std::vector<float> b = ctx.node().attr_floats("intercepts");
  if (static_cast<int64_t>(w.size()) != targets * r.c)
    return ctx.error("coefficients has " + std::to_string(w.size()) + " values, expected " +
                     std::to_string(targets) + " x " + std::to_string(r.c));
  if (!b.empty() && static_cast<int64_t>(b.size()) != targets)
    return ctx.error("intercepts has " + std::to_string(b.size()) + " values, expected " +
                     std::to_string(targets));
  std::vector<float> y(static_cast<size_t>(r.n * targets));
  for (int64_t i = 0; i < r.n; ++i)
    for (int64_t t = 0; t < targets; ++t) {
      float acc = 0;
      for (int64_t k = 0; k < r.c; ++k)
        acc += r.x[static_cast<size_t>(i * r.c + k)] * w[static_cast<size_t>(t * r.c + k)];
      y[static_cast<size_t>(i * targets + t)] = acc + (b.empty() ? 0.f : b[static_cast<size_t>(t)]);
    }
  return y;
}

Status write_floats(KernelContext& ctx, size_t i, const std::vector<float>& v,
                    const std::vector<int64_t>& dims) {
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(i, ir::DType::kFloat, dims));
  std::copy(v.begin(), v.end(), o->mutable_data<float>());
  return Status::ok();
}

Status scaler(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("input X is required");
  const std::vector<float> offset = ctx.node().attr_floats("offset");
  const std::vector<float> scale = ctx.node().attr_floats("scale");
  const int64_t c = x->dims().empty() ? 1 : x->dims().back();
  auto per_feature = [&](const std::vector<float>& v, const char* name) -> Status {
    if (v.size() > 1 && static_cast<int64_t>(v.size()) != c)
      return ctx.error(std::string(name) + " has " + std::to_string(v.size()) + " values for " +
                       std::to_string(c) + " features");
    return Status::ok();
  };
  XOPT_RETURN_IF_ERROR(per_feature(offset, "offset"));
  XOPT_RETURN_IF_ERROR(per_feature(scale, "scale"));
  const std::vector<double> xv = doubles(*x);
  std::vector<float> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const auto f = static_cast<size_t>(static_cast<int64_t>(i) % c);
    const float o = offset.empty() ? 0.f : offset[offset.size() == 1 ? 0 : f];
    const float s = scale.empty() ? 1.f : scale[scale.size() == 1 ? 0 : f];
    y[i] = (static_cast<float>(xv[i]) - o) * s;
  }
  return write_floats(ctx, 0, y, x->dims());
}

Status array_feature_extractor(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  const ir::Tensor* idx = ctx.input(1);
  if (x == nullptr || idx == nullptr) return ctx.error("inputs X and Y are required");
  if (x->dims().empty()) return ctx.error("X must have rank >= 1");
  const std::vector<int64_t> ind = idx->to_int64_vector();
  if (ind.empty()) return ctx.error("Y (the indices) is empty");
  const int64_t c = x->dims().back();
  for (int64_t i : ind)
    if (i < 0 || i >= c)
      return ctx.error("index " + std::to_string(i) + " is outside [0, " + std::to_string(c) +
                       ") of the last axis");
  std::vector<int64_t> dims = x->dims();
  if (dims.size() == 1) dims.insert(dims.begin(), 1);
  dims.back() = static_cast<int64_t>(ind.size());
  const int64_t rows = x->numel() / c;
  if (x->dtype() == ir::DType::kString) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output(0, x->dtype(), dims));
    auto& out = o->mutable_strings();
    out.resize(static_cast<size_t>(rows) * ind.size());
    for (int64_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < ind.size(); ++k)
        out[static_cast<size_t>(r) * ind.size() + k] =
            x->strings()[static_cast<size_t>(r * c + ind[k])];
    return Status::ok();
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * o, ctx.output_uninit(0, x->dtype(), dims));
  const size_t elem = ir::dtype_size(x->dtype());
  const auto* src = static_cast<const uint8_t*>(x->raw_data());
  auto* dst = static_cast<uint8_t*>(o->mutable_raw_data());
  for (int64_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < ind.size(); ++k)
      std::copy_n(src + static_cast<size_t>(r * c + ind[k]) * elem, elem,
                  dst + (static_cast<size_t>(r) * ind.size() + k) * elem);
  return Status::ok();
}

Status linear_regressor(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Rows r, rows_of(ctx));
  XOPT_ASSIGN_OR_RETURN(Transform t, transform_of(ctx));
  const int64_t targets = ctx.node().attr_int("targets", 1);
  if (targets < 1) return ctx.error("targets must be positive");
  XOPT_ASSIGN_OR_RETURN(std::vector<float> y, affine(ctx, r, targets));
  post_transform(y, r.n, targets, t);
  return write_floats(ctx, 0, y, {r.n, targets});
}

Status linear_classifier(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(Rows r, rows_of(ctx));
  XOPT_ASSIGN_OR_RETURN(Transform t, transform_of(ctx));
  const std::vector<int64_t> ints = ctx.node().attr_ints("classlabels_ints");
  std::vector<std::string> strings;
  if (const auto* a = ctx.node().attr("classlabels_strings"))
    strings.assign(a->strings().begin(), a->strings().end());
  if (ints.empty() == strings.empty())
    return ctx.error("exactly one of classlabels_ints and classlabels_strings must be given");
  const bool use_strings = !strings.empty();
  const size_t labels = use_strings ? strings.size() : ints.size();
  const auto classes = static_cast<int64_t>(ctx.node().attr_floats("intercepts").size());
  if (classes < 1) return ctx.error("intercepts must hold one value per class");
  if (classes > 1 && static_cast<int64_t>(labels) != classes)
    return ctx.error(std::to_string(labels) + " class labels for " + std::to_string(classes) +
                     " classes");
  XOPT_ASSIGN_OR_RETURN(std::vector<float> s, affine(ctx, r, classes));
  // The label of each row: the best class, or for one score the second label when it is > 0.
  std::vector<size_t> best(static_cast<size_t>(r.n));
  for (int64_t i = 0; i < r.n; ++i) {
    const float* row = s.data() + i * classes;
    if (classes == 1) {
      best[static_cast<size_t>(i)] = row[0] > 0 ? 1 : 0;
    } else {
      size_t m = 0;
      for (int64_t j = 1; j < classes; ++j)
        if (row[j] > row[m]) m = static_cast<size_t>(j);
      best[static_cast<size_t>(i)] = m;
    }
  }
  if (use_strings) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, ir::DType::kString, {r.n}));
    auto& out = y->mutable_strings();
    out.resize(static_cast<size_t>(r.n));
    for (size_t i = 0; i < best.size(); ++i)
      out[i] = labels == 2 || classes > 1 ? strings[best[i]] : std::to_string(best[i]);
  } else {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kInt64, {r.n}));
    for (size_t i = 0; i < best.size(); ++i)
      y->mutable_data<int64_t>()[i] =
          labels == 2 || classes > 1 ? ints[best[i]] : static_cast<int64_t>(best[i]);
  }
  // One score and two labels: the scores of both classes, [1 - s, s] (PROBIT: the score alone).
  const bool second_class = classes == 1 && labels == 2;
  if (second_class && t != Transform::kProbit) {
    std::vector<float> two(static_cast<size_t>(2 * r.n));
    for (int64_t i = 0; i < r.n; ++i) {
      two[static_cast<size_t>(2 * i)] = 1.f - s[static_cast<size_t>(i)];
      two[static_cast<size_t>(2 * i + 1)] = s[static_cast<size_t>(i)];
    }
    return write_floats(ctx, 1, two, {r.n, 2});
  }
  if (second_class)  // onnxruntime leaves half of the scores unwritten there
    return ctx.error("post_transform PROBIT with one score and two class labels is undefined");
  post_transform(s, r.n, classes, t);
  return write_floats(ctx, 1, s, {r.n, classes});
}

}  // namespace

XOPT_CPU_KERNEL("ai.onnx.ml", "Scaler", 1, kLatest, scaler);
XOPT_CPU_KERNEL("ai.onnx.ml", "ArrayFeatureExtractor", 1, kLatest, array_feature_extractor);
XOPT_CPU_KERNEL("ai.onnx.ml", "LinearRegressor", 1, kLatest, linear_regressor);
XOPT_CPU_KERNEL("ai.onnx.ml", "LinearClassifier", 1, kLatest, linear_classifier);

}  // namespace xopt::exec::ops
