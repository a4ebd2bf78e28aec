// The random generators (executor/cpu/kernels/random.cc): shapes and types by attribute, values in
// their distribution's support and roughly its moments, a seed repeats a draw, bad attributes are
// errors naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "executor/cpu/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

namespace xopt {
namespace {

Result<std::vector<ir::Tensor>> run(const std::string& body, const std::string& sig,
                                    std::map<std::string, ir::Tensor> inputs = {}) {
  auto m = ir::parse_model_text("<ir_version: 8, opset_import: [\"\" : 17]>\n" + sig + "\n{\n" +
                                body + "\n}\n");
  if (!m.is_ok()) return m.status();
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*m->graph));
  return exec::run_model(*m, inputs);
}

double mean(const ir::Tensor& t) {
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i) s += t.as_double(i);
  return s / static_cast<double>(t.numel());
}

TEST(RandomOps, UniformAndNormalByAttribute) {
  auto u = run("y = RandomUniform <shape = [100, 200], low = -3.0, high = 5.0, seed = 2.0> ()",
               "g () => (float[100,200] y)");
  ASSERT_TRUE(u.is_ok()) << u.status().message();
  const ir::Tensor& y = (*u)[0];
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{100, 200}));
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(y.as_double(i) >= -3 && y.as_double(i) < 5);
  EXPECT_NEAR(mean(y), 1.0, 0.1);
  auto again = run("y = RandomUniform <shape = [100, 200], low = -3.0, high = 5.0, seed = 2.0> ()",
                   "g () => (float[100,200] y)");
  ASSERT_TRUE(again.is_ok());
  EXPECT_TRUE((*again)[0].same_contents(y)) << "the same seed draws the same values";
  auto other = run("y = RandomUniform <shape = [100, 200], low = -3.0, high = 5.0, seed = 3.0> ()",
                   "g () => (float[100,200] y)");
  ASSERT_TRUE(other.is_ok());
  EXPECT_FALSE((*other)[0].same_contents(y));

  auto n = run("y = RandomNormal <shape = [20000], mean = 2.0, scale = 3.0, dtype = 11> ()",
               "g () => (double[20000] y)");
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  ASSERT_EQ((*n)[0].dtype(), ir::DType::kDouble);
  const double m = mean((*n)[0]);
  double var = 0;
  for (int64_t i = 0; i < (*n)[0].numel(); ++i) var += std::pow((*n)[0].as_double(i) - m, 2);
  EXPECT_NEAR(m, 2.0, 0.1);
  EXPECT_NEAR(std::sqrt(var / 20000), 3.0, 0.1);
}

TEST(RandomOps, LikeTakesTheInputsShapeAndTypeUnlessTold) {
  auto r = run("y = RandomNormalLike (x)\n z = RandomUniformLike <dtype = 10> (x)",
               "g (double[3,4] x) => (double[3,4] y, float16[3,4] z)",
               {{"x", ir::Tensor(ir::DType::kDouble, {3, 4})}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ((*r)[0].dtype(), ir::DType::kDouble);
  EXPECT_EQ((*r)[1].dtype(), ir::DType::kFloat16);
  EXPECT_EQ((*r)[1].dims(), (std::vector<int64_t>{3, 4}));
  auto bad = run("y = RandomUniformLike (x)", "g (int64[3] x) => (int64[3] y)",
                 {{"x", ir::Tensor(ir::DType::kInt64, {3})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("give 'dtype'"), std::string::npos)
      << bad.status().message();
}

TEST(RandomOps, BernoulliDrawsWithTheGivenProbabilities) {
  std::vector<float> p(30000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i < 10000 ? 0.f : i < 20000 ? 1.f : 0.25f;
  auto r = run("y = Bernoulli <dtype = 9, seed = 5.0> (x)", "g (float[30000] x) => (bool[30000] y)",
               {{"x", ir::Tensor::of<float>({30000}, p)}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const ir::Tensor& y = (*r)[0];
  ASSERT_EQ(y.dtype(), ir::DType::kBool);
  int64_t ones_low = 0, ones_high = 0, ones_quarter = 0;
  for (int64_t i = 0; i < 30000; ++i) {
    const bool v = y.data<bool>()[i];
    (i < 10000 ? ones_low : i < 20000 ? ones_high : ones_quarter) += v ? 1 : 0;
  }
  EXPECT_EQ(ones_low, 0);
  EXPECT_EQ(ones_high, 10000);
  EXPECT_NEAR(static_cast<double>(ones_quarter) / 10000, 0.25, 0.02);
  auto bad = run("y = Bernoulli (x)", "g (float[2] x) => (float[2] y)",
                 {{"x", ir::Tensor::of<float>({2}, {0.5f, 1.5f})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("outside [0, 1]"), std::string::npos)
      << bad.status().message();
}

TEST(RandomOps, MultinomialSamplesTheSoftmax) {
  // Row 0 puts all mass on class 2, row 1 splits it evenly between classes 0 and 3.
  auto r = run("y = Multinomial <sample_size = 4000, dtype = 7, seed = 1.0> (x)",
               "g (float[2,4] x) => (int64[2,4000] y)",
               {{"x", ir::Tensor::of<float>({2, 4}, {-100, -100, 0, -100, 0, -100, -100, 0})}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const ir::Tensor& y = (*r)[0];
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{2, 4000}));
  int64_t zeros = 0;
  for (int64_t s = 0; s < 4000; ++s) {
    EXPECT_EQ(y.data<int64_t>()[s], 2);
    const int64_t c = y.data<int64_t>()[4000 + s];
    ASSERT_TRUE(c == 0 || c == 3) << c;
    zeros += c == 0 ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(zeros) / 4000, 0.5, 0.05);
  auto bad = run("y = Multinomial <dtype = 1> (x)", "g (float[2,4] x) => (float[2,1] y)",
                 {{"x", ir::Tensor(ir::DType::kFloat, {2, 4})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("dtype must be int32 or int64"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace xopt
