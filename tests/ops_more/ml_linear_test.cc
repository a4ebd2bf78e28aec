// The linear ai.onnx.ml ops (executor/cpu/kernels/ml_linear.cc, shapes in ir/ops/ml.cc) against
// values worked out by hand: Scaler, ArrayFeatureExtractor, LinearRegressor with each
// post_transform, LinearClassifier multi-class and binary (one score, two labels), and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "executor/cpu/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

namespace xopt {
namespace {

Result<std::vector<ir::Tensor>> run(const std::string& sig, const std::string& body,
                                    std::map<std::string, ir::Tensor> inputs) {
  auto m = ir::parse_model_text("<ir_version: 8, opset_import: [\"\" : 17, \"ai.onnx.ml\" : 1]>\n" +
                                sig + "\n{\n" + body + "\n}\n");
  if (!m.is_ok()) return m.status();
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*m->graph));
  return exec::run_model(*m, inputs);
}

void expect_floats(const ir::Tensor& t, const std::vector<int64_t>& dims,
                   const std::vector<float>& want) {
  ASSERT_EQ(t.dtype(), ir::DType::kFloat);
  ASSERT_EQ(t.dims(), dims);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.as_double(static_cast<int64_t>(i)), want[i], 1e-5 * (1 + std::abs(want[i])))
        << "element " << i;
}

const ir::Tensor kX = ir::Tensor::of<float>({2, 3}, {1, 2, 3, -1, 0, 4});

TEST(MlLinear, ScalerPerFeatureAndOneValue) {
  auto r = run("g (float[2,3] x) => (float[2,3] y, float[2,3] z)",
               "y = ai.onnx.ml.Scaler <offset = [1.0, 0.0, -1.0], scale = [2.0, 0.5, 1.0]> (x)\n"
               "z = ai.onnx.ml.Scaler <offset = [1.0], scale = [3.0]> (x)",
               {{"x", kX}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  expect_floats((*r)[0], {2, 3}, {0, 1, 4, -4, 0, 5});
  expect_floats((*r)[1], {2, 3}, {0, 3, 6, -6, -3, 9});
  // int64 input, float output.
  auto i = run("g (int64[3] x) => (float[3] y)",
               "y = ai.onnx.ml.Scaler <offset = [1.0], scale = [0.5]> (x)",
               {{"x", ir::Tensor::of<int64_t>({3}, {1, 3, 5})}});
  ASSERT_TRUE(i.is_ok()) << i.status().message();
  expect_floats((*i)[0], {3}, {0, 1, 2});
}

TEST(MlLinear, ArrayFeatureExtractorOnTheLastAxis) {
  auto r = run("g (float[2,3] x, int64[2] i) => (float[2,2] y)",
               "y = ai.onnx.ml.ArrayFeatureExtractor (x, i)",
               {{"x", kX}, {"i", ir::Tensor::of<int64_t>({2}, {2, 0})}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  expect_floats((*r)[0], {2, 2}, {3, 1, 4, -1});
  auto one_d = run(
      "g (float[3] x, int64[1] i) => (float[1,1] y)", "y = ai.onnx.ml.ArrayFeatureExtractor (x, i)",
      {{"x", ir::Tensor::of<float>({3}, {5, 6, 7})}, {"i", ir::Tensor::of<int64_t>({1}, {1})}});
  ASSERT_TRUE(one_d.is_ok()) << one_d.status().message();
  expect_floats((*one_d)[0], {1, 1}, {6});
  auto out = run("g (float[2,3] x, int64[1] i) => (float[2,1] y)",
                 "y = ai.onnx.ml.ArrayFeatureExtractor (x, i)",
                 {{"x", kX}, {"i", ir::Tensor::of<int64_t>({1}, {3})}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("index 3 is outside [0, 3)"), std::string::npos)
      << out.status().message();
}

// Scores of kX under W = [[1, 0, -1], [0.5, 1, 0]], b = [0.5, -1]: rows [-1.5, 1.5] and
// [-4.5, -1.5].
constexpr const char* kAffine =
    "coefficients = [1.0, 0.0, -1.0, 0.5, 1.0, 0.0], intercepts = [0.5, -1.0]";

TEST(MlLinear, LinearRegressorWithEachTransform) {
  auto softmax = [](float a, float b) {
    const float ea = std::exp(a), eb = std::exp(b);
    return std::vector<float>{ea / (ea + eb), eb / (ea + eb)};
  };
  const auto s0 = softmax(-1.5f, 1.5f), s1 = softmax(-4.5f, -1.5f);
  struct Case {
    const char* transform;
    std::vector<float> want;
  };
  auto sig = [](float v) { return 1 / (1 + std::exp(-v)); };
  for (const Case& c : {Case{"NONE", {-1.5f, 1.5f, -4.5f, -1.5f}},
                        Case{"LOGISTIC", {sig(-1.5f), sig(1.5f), sig(-4.5f), sig(-1.5f)}},
                        Case{"SOFTMAX", {s0[0], s0[1], s1[0], s1[1]}}}) {
    auto r = run("g (float[2,3] x) => (float[2,2] y)",
                 std::string("y = ai.onnx.ml.LinearRegressor <") + kAffine +
                     ", targets = 2, post_transform = \"" + c.transform + "\"> (x)",
                 {{"x", kX}});
    ASSERT_TRUE(r.is_ok()) << c.transform << ": " << r.status().message();
    expect_floats((*r)[0], {2, 2}, c.want);
  }
  // PROBIT of 0.5 is 0 (the inverse-erf approximation is exact there).
  auto p = run("g (float[1,1] x) => (float[1,1] y)",
               "y = ai.onnx.ml.LinearRegressor <coefficients = [0.25], intercepts = [0.25], "
               "post_transform = \"PROBIT\"> (x)",
               {{"x", ir::Tensor::of<float>({1, 1}, {1})}});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  expect_floats((*p)[0], {1, 1}, {0});
  auto bad = run("g (float[2,3] x) => (float[2,2] y)",
                 "y = ai.onnx.ml.LinearRegressor <coefficients = [1.0, 2.0], targets = 2> (x)",
                 {{"x", kX}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("coefficients has 2 values, expected 2 x 3"),
            std::string::npos)
      << bad.status().message();
}

TEST(MlLinear, LinearClassifierMultiClassAndBinary) {
  auto r = run("g (float[2,3] x) => (int64[2] label, float[2,2] p)",
               std::string("label, p = ai.onnx.ml.LinearClassifier <") + kAffine +
                   ", classlabels_ints = [7, 9], post_transform = \"LOGISTIC\"> (x)",
               {{"x", kX}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ((*r)[0].dtype(), ir::DType::kInt64);
  EXPECT_EQ((*r)[0].to_int64_vector(), (std::vector<int64_t>{9, 9}));
  auto sig = [](float v) { return 1 / (1 + std::exp(-v)); };
  expect_floats((*r)[1], {2, 2}, {sig(-1.5f), sig(1.5f), sig(-4.5f), sig(-1.5f)});

  // One score, two string labels: label by the sign, scores [1 - s, s] (no transform applied,
  // as onnxruntime does). Scores under W = [1, 0, -1], b = 0.5: 4.5 and -4.5.
  auto b = run("g (float[2,3] x) => (string[2] label, float[2,2] p)",
               "label, p = ai.onnx.ml.LinearClassifier <coefficients = [1.0, 0.0, -1.0], "
               "intercepts = [0.5], classlabels_strings = [\"no\", \"yes\"]> (x)",
               {{"x", ir::Tensor::of<float>({2, 3}, {1, 2, -3, -1, 0, 4})}});
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_EQ((*b)[0].strings(), (std::vector<std::string>{"yes", "no"}));
  expect_floats((*b)[1], {2, 2}, {-3.5f, 4.5f, 5.5f, -4.5f});

  auto both =
      run("g (float[2,3] x) => (int64[2] label, float[2,2] p)",
          std::string("label, p = ai.onnx.ml.LinearClassifier <") + kAffine + "> (x)", {{"x", kX}});
  ASSERT_FALSE(both.is_ok());
  EXPECT_NE(both.status().message().find("exactly one of classlabels_ints"), std::string::npos)
      << both.status().message();
}

}  // namespace
}  // namespace xopt
