// Store low, compute high: the kernels that sum many terms take float16 and bfloat16 in and out and
// accumulate in float32 or double (executor/cpu/kernel_precision.h), so a converted model needs no
// Casts around them. Each case is built so that an accumulator of the storage type gets it wrong:
// 4096 values of 1.0 and 1024 of 1/16 sum to 4160, but a float16 running sum stops at 2048 (2048 +
// 1 rounds back to 2048) and a bfloat16 one at 256; a LayerNorm row with mean 8192 overflows a
// float16 sum. Every test also computes what such an accumulator would give and checks that the
// comparison rejects it, so none of them can pass with a half accumulator.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "executor/cpu/kernel_precision.h"
#include "executor/cpu/session.h"
#include "ir/text.h"

namespace xopt::test {
namespace {

struct Low {
  ir::DType dtype;
  const char* name;  // in ONNX's text syntax
  double eps;        // 2^-mantissa bits
};
const Low kTypes[] = {{ir::DType::kFloat16, "float16", 0x1p-10},
                      {ir::DType::kBFloat16, "bfloat16", 0x1p-7}};

double round_to(const Low& t, double v) {
  const auto f = static_cast<float>(v);
  return t.dtype == ir::DType::kFloat16 ? ir::half_to_float(ir::float_to_half(f))
                                        : ir::bfloat16_to_float(ir::float_to_bfloat16(f));
}

ir::Tensor tensor(const Low& t, std::vector<int64_t> dims, const std::vector<double>& v) {
  ir::Tensor out(t.dtype, std::move(dims));
  auto* d = out.mutable_data<uint16_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const auto f = static_cast<float>(v[i]);
    d[i] = t.dtype == ir::DType::kFloat16 ? ir::float_to_half(f) : ir::float_to_bfloat16(f);
  }
  return out;
}

// "T" in `text` becomes the type's name.
std::vector<ir::Tensor> run(const Low& t, std::string text,
                            const std::map<std::string, ir::Tensor>& inputs) {
  for (size_t at; (at = text.find("T[")) != std::string::npos;) text.replace(at, 1, t.name);
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  if (!m.is_ok()) return {};
  auto out = exec::run_model(*m, inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  for (const ir::Tensor& y : *out) EXPECT_EQ(y.dtype(), t.dtype) << "stored in the low type";
  return std::move(*out);
}

// Within one unit in the last place of T at the output's scale: |got - want| <= eps_T * max|want|.
// NaN or infinity never passes.
bool close(const Low& t, const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  double scale = 0.0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= t.eps * scale)) return false;
  return true;
}

std::vector<double> values(const ir::Tensor& y) {
  std::vector<double> v(static_cast<size_t>(y.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = y.as_double(static_cast<int64_t>(i));
  return v;
}

// 4096 ones and 1024 sixteenths: the sum is 4160, exact in both types.
std::vector<double> long_row() {
  std::vector<double> v(4096, 1.0);
  v.resize(5120, 1.0 / 16);
  return v;
}

// A running sum kept in T, as a half accumulator would keep it.
double half_sum(const Low& t, const std::vector<double>& v,
                const std::function<double(double)>& f) {
  double acc = 0.0;
  for (double x : v) acc = round_to(t, acc + f(x));
  return acc;
}

void expect_accurate(const Low& t, const std::vector<double>& got, const std::vector<double>& want,
                     const std::vector<double>& half_acc, const std::string& what) {
  EXPECT_TRUE(close(t, got, want))
      << what << " in " << t.name << ": got " << got[0] << ", want " << want[0];
  EXPECT_FALSE(close(t, half_acc, want))
      << what << " in " << t.name << ": a half accumulator (" << half_acc[0]
      << ") would pass too; the case cannot tell them apart";
}

TEST(StoreLowComputeHigh, Reductions) {
  const std::vector<double> x = long_row();
  const auto id = [](double v) { return v; };
  const auto sq = [](double v) { return v * v; };
  const auto ex = [](double v) { return std::exp(v); };
  for (const Low& t : kTypes) {
    const double sum = 4160, sumsq = 4096 + 1024.0 / 256,
                 sumexp = 4096 * std::exp(1.0) + 1024 * std::exp(1.0 / 16);
    struct Case {
      const char* op;
      double want;
      double half;
    } cases[] = {
        {"ReduceSum", sum, half_sum(t, x, id)},
        {"ReduceMean", sum / 5120, half_sum(t, x, id) / 5120},
        {"ReduceL1", sum, half_sum(t, x, id)},
        {"ReduceSumSquare", sumsq, half_sum(t, x, sq)},
        {"ReduceL2", std::sqrt(sumsq), std::sqrt(half_sum(t, x, sq))},
        {"ReduceLogSum", std::log(sum), std::log(half_sum(t, x, id))},
        {"ReduceLogSumExp", std::log(sumexp), std::log(half_sum(t, x, ex))},
    };
    for (const Case& c : cases) {
      const std::string text = std::string(R"(<ir_version: 9, opset_import: ["" : 18]>
        g (T[1,5120] x) => (T[1,1] y) { y = )") +
                               c.op + " <keepdims = 1> (x) }";
      auto y = run(t, text, {{"x", tensor(t, {1, 5120}, x)}});
      ASSERT_EQ(y.size(), 1u);
      expect_accurate(t, values(y[0]), {round_to(t, c.want)}, {round_to(t, c.half)}, c.op);
    }
  }
}

TEST(StoreLowComputeHigh, SoftmaxAndLogSoftmax) {
  const std::vector<double> x(4096, 0.0);
  for (const Low& t : kTypes) {
    const double half = half_sum(t, x, [](double v) { return std::exp(v); });
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      const bool log = std::string(op) == "LogSoftmax";
      auto y = run(t,
                   std::string(R"(<ir_version: 9, opset_import: ["" : 13]>
                     g (T[1,4096] x) => (T[1,4096] y) { y = )") +
                       op + " <axis = -1> (x) }",
                   {{"x", tensor(t, {1, 4096}, x)}});
      ASSERT_EQ(y.size(), 1u);
      const double want = log ? -std::log(4096.0) : 1.0 / 4096;
      const double wrong = log ? -std::log(half) : 1.0 / half;
      expect_accurate(t, values(y[0]), std::vector<double>(4096, round_to(t, want)),
                      std::vector<double>(4096, round_to(t, wrong)), op);
    }
  }
}

TEST(StoreLowComputeHigh, MatMulGemmConvConvTranspose) {
  const std::vector<double> x = long_row(), ones(5120, 1.0);
  for (const Low& t : kTypes) {
    const double want = 4160, half = half_sum(t, x, [](double v) { return v; });
    struct Case {
      const char* what;
      std::string text;
      std::vector<int64_t> a_dims, b_dims;
    } cases[] = {
        {"MatMul",
         R"(g (T[1,5120] a, T[5120,1] b) => (T[1,1] y) { y = MatMul(a, b) })",
         {1, 5120},
         {5120, 1}},
        {"Gemm",
         R"(g (T[1,5120] a, T[1,5120] b) => (T[1,1] y) { y = Gemm <transB = 1> (a, b) })",
         {1, 5120},
         {1, 5120}},
        {"Conv",
         R"(g (T[1,1280,2,2] a, T[1,1280,2,2] b) => (T[1,1,1,1] y) { y = Conv(a, b) })",
         {1, 1280, 2, 2},
         {1, 1280, 2, 2}},
        {"ConvTranspose",
         R"(g (T[1,5120,1,1] a, T[5120,1,1,1] b) => (T[1,1,1,1] y) { y = ConvTranspose(a, b) })",
         {1, 5120, 1, 1},
         {5120, 1, 1, 1}},
    };
    for (const Case& c : cases) {
      auto y = run(t, R"(<ir_version: 9, opset_import: ["" : 18]>)" + c.text,
                   {{"a", tensor(t, c.a_dims, x)}, {"b", tensor(t, c.b_dims, ones)}});
      ASSERT_EQ(y.size(), 1u) << c.what;
      expect_accurate(t, values(y[0]), {want}, {half}, c.what);
    }
  }
}

// A row with a large mean and a small spread, 8192 +- d (d = 8 in float16, 64 in bfloat16: the
// values are exact): the output is +-1. A float16 sum of the row overflows (1024 * 8192 > 65504);
// a float32 one-pass variance (E[x^2] - mean^2) loses the spread.
std::vector<double> offset_row(const Low& t) {
  const double d = t.dtype == ir::DType::kFloat16 ? 8 : 64;
  std::vector<double> v(1024);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 8192 + (i % 2 ? d : -d);
  return v;
}

std::vector<double> half_layer_norm(const Low& t, const std::vector<double>& v) {
  const double mean = round_to(t, half_sum(t, v, [](double x) { return x; }) / 1024);
  const double var =
      round_to(t, half_sum(t, v, [&](double x) { return (x - mean) * (x - mean); }) / 1024);
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) y[i] = round_to(t, (v[i] - mean) / std::sqrt(var));
  return y;
}

TEST(StoreLowComputeHigh, LayerNormAndSkipLayerNormOnALargeMean) {
  for (const Low& t : kTypes) {
    const std::vector<double> x = offset_row(t);
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = i % 2 ? 1.0 : -1.0;
    const std::vector<double> half = half_layer_norm(t, x);
    const ir::Tensor ones = tensor(t, {1024}, std::vector<double>(1024, 1.0));
    const ir::Tensor zeros = tensor(t, {1024}, std::vector<double>(1024, 0.0));
    auto ln = run(t, R"(<ir_version: 9, opset_import: ["" : 17]>
      g (T[1,1024] x, T[1024] s, T[1024] b) => (T[1,1024] y) {
        y = LayerNormalization <axis = -1, epsilon = 0.0> (x, s, b)
      })",
                  {{"x", tensor(t, {1, 1024}, x)}, {"s", ones}, {"b", zeros}});
    ASSERT_EQ(ln.size(), 1u);
    expect_accurate(t, values(ln[0]), want, half, "LayerNormalization");
    auto sln = run(t, R"(<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
      g (T[1,1,1024] x, T[1,1,1024] skip, T[1024] s, T[1024] b) => (T[1,1,1024] y) {
        y = com.microsoft.SkipLayerNormalization <epsilon = 0.0> (x, skip, s, b)
      })",
                   {{"x", tensor(t, {1, 1, 1024}, x)},
                    {"skip", tensor(t, {1, 1, 1024}, std::vector<double>(1024, 0.0))},
                    {"s", ones},
                    {"b", zeros}});
    ASSERT_EQ(sln.size(), 1u);
    expect_accurate(t, values(sln[0]), want, half, "SkipLayerNormalization");
  }
}

// One query, two keys: q . k0 = 4096 (4096 ones), q . k1 = 0; scale 1/4096 makes the scores 1 and
// 0, the values are 1 and 0: the output is e / (1 + e). A half accumulator's score stops at 2048
// (float16) or 256 (bfloat16).
TEST(StoreLowComputeHigh, AttentionAndMultiHeadAttention) {
  const std::vector<double> q(4096, 1.0);
  std::vector<double> k(8192, 0.0);
  std::fill(k.begin(), k.begin() + 4096, 1.0);
  const std::vector<double> v = {1.0, 0.0};
  const double want = std::exp(1.0) / (1 + std::exp(1.0));
  for (const Low& t : kTypes) {
    const double s = half_sum(t, q, [](double x) { return x; }) / 4096;
    const double half = std::exp(s) / (1 + std::exp(s));
    auto onnx = run(t, R"(<ir_version: 10, opset_import: ["" : 23]>
      g (T[1,1,1,4096] q, T[1,1,2,4096] k, T[1,1,2,1] v) => (T[1,1,1,1] y) {
        y = Attention <scale = 0.000244140625> (q, k, v)
      })",
                    {{"q", tensor(t, {1, 1, 1, 4096}, q)},
                     {"k", tensor(t, {1, 1, 2, 4096}, k)},
                     {"v", tensor(t, {1, 1, 2, 1}, v)}});
    ASSERT_EQ(onnx.size(), 1u);
    expect_accurate(t, values(onnx[0]), {round_to(t, want)}, {round_to(t, half)}, "Attention");
    auto mha = run(t, R"(<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
      g (T[1,1,4096] q, T[1,2,4096] k, T[1,2,1] v) => (T[1,1,1] y) {
        y = com.microsoft.MultiHeadAttention <num_heads = 1, scale = 0.000244140625> (q, k, v)
      })",
                   {{"q", tensor(t, {1, 1, 4096}, q)},
                    {"k", tensor(t, {1, 2, 4096}, k)},
                    {"v", tensor(t, {1, 2, 1}, v)}});
    ASSERT_EQ(mha.size(), 1u);
    expect_accurate(t, values(mha[0]), {round_to(t, want)}, {round_to(t, half)},
                    "MultiHeadAttention");
  }
}

// The listing's facts for these ops: float16 and bfloat16 taken, accumulated in f32 or f64.
TEST(StoreLowComputeHigh, ListingSaysTheyAccumulateHigh) {
  const std::pair<const char*, const char*> ops[] = {{"", "LayerNormalization"},
                                                     {"com.microsoft", "SkipLayerNormalization"},
                                                     {"", "Softmax"},
                                                     {"", "LogSoftmax"},
                                                     {"", "ReduceSum"},
                                                     {"", "ReduceMean"},
                                                     {"", "ReduceL2"},
                                                     {"", "ReduceLogSumExp"},
                                                     {"", "ReduceSumSquare"},
                                                     {"", "MatMul"},
                                                     {"", "Gemm"},
                                                     {"", "Conv"},
                                                     {"", "ConvTranspose"},
                                                     {"", "Attention"},
                                                     {"com.microsoft", "MultiHeadAttention"}};
  for (const auto& [domain, op] : ops) {
    const exec::KernelPrecision p = exec::kernel_precision(domain, op, 28);
    const std::string d = exec::describe(p);
    EXPECT_NE(d.find("f16 bf16"), std::string::npos) << op << ": " << d;
    EXPECT_TRUE(p.accumulates == "f32" || p.accumulates == "f64") << op << ": " << d;
  }
  EXPECT_EQ(exec::kernel_precision("", "Relu", 14).accumulates, "");
  EXPECT_EQ(exec::describe(exec::kernel_precision("", "Relu", 14)),
            "f64 f32 f16 bf16 i8 i16 i32 i64");
}

}  // namespace
}  // namespace xopt::test
