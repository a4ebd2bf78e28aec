// Elementwise kernels: the semantics the ONNX node tests do not pin down (integer overflow and
// division, Mod signs, NaN in Max/Min, Cast of strings and out-of-range values, every Constant
// attribute, legacy broadcasting, contrib Gelu ops, Dropout in training mode).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "executor/cpu/session.h"
#include "ir/text.h"

namespace xopt::exec {
namespace {

// Runs a model given in ONNX text syntax; returns its first output.
ir::Tensor run1(const std::string& text, std::map<std::string, ir::Tensor> inputs) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  if (!m.is_ok()) return {};
  auto out = run_model(*m, inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  return (*out)[0];
}

template <typename T>
std::vector<T> values(const ir::Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

std::string binary(const char* op, const char* type, const char* attrs = "", int opset = 17) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + type +
         "[N] a, " + type + "[N] b) => (" + type + "[N] c) { c = " + op + attrs + "(a, b) }";
}

TEST(Elementwise, IntegerArithmeticWraps) {
  using L = std::numeric_limits<int32_t>;
  auto a = ir::Tensor::of<int32_t>({3}, {L::max(), L::min(), 46341});
  auto b = ir::Tensor::of<int32_t>({3}, {1, -1, 46341});
  EXPECT_EQ(values<int32_t>(run1(binary("Add", "int32"), {{"a", a}, {"b", b}})),
            (std::vector<int32_t>{L::min(), L::max(), 92682}));
  EXPECT_EQ(values<int32_t>(run1(binary("Mul", "int32"), {{"a", a}, {"b", b}})),
            (std::vector<int32_t>{L::max(), L::min(), static_cast<int32_t>(46341u * 46341u)}));
  auto u = ir::Tensor::of<uint16_t>({2}, {65535, 0});
  auto v = ir::Tensor::of<uint16_t>({2}, {65535, 1});
  EXPECT_EQ(values<uint16_t>(run1(binary("Mul", "uint16"), {{"a", u}, {"b", v}})),
            (std::vector<uint16_t>{1, 0}));
  EXPECT_EQ(values<uint16_t>(run1(binary("Sub", "uint16"), {{"a", u}, {"b", v}})),
            (std::vector<uint16_t>{0, 65535}));
}

TEST(Elementwise, IntegerDivisionTruncates) {
  auto a = ir::Tensor::of<int64_t>({5}, {7, -7, 7, -7, std::numeric_limits<int64_t>::min()});
  auto b = ir::Tensor::of<int64_t>({5}, {2, 2, -2, 0, -1});
  EXPECT_EQ(values<int64_t>(run1(binary("Div", "int64"), {{"a", a}, {"b", b}})),
            (std::vector<int64_t>{3, -3, -3, 0, std::numeric_limits<int64_t>::min()}));
}

TEST(Elementwise, ModSignFollowsDivisorUnlessFmod) {
  auto a = ir::Tensor::of<int32_t>({4}, {7, -7, 7, -7});
  auto b = ir::Tensor::of<int32_t>({4}, {3, 3, -3, -3});
  EXPECT_EQ(values<int32_t>(run1(binary("Mod", "int32"), {{"a", a}, {"b", b}})),
            (std::vector<int32_t>{1, 2, -2, -1}));
  EXPECT_EQ(values<int32_t>(run1(binary("Mod", "int32", "<fmod = 1>"), {{"a", a}, {"b", b}})),
            (std::vector<int32_t>{1, -1, 1, -1}));
  auto fa = ir::Tensor::of<float>({2}, {-7.5f, 7.5f});
  auto fb = ir::Tensor::of<float>({2}, {2.0f, -2.0f});
  EXPECT_EQ(values<float>(run1(binary("Mod", "float", "<fmod = 1>"), {{"a", fa}, {"b", fb}})),
            (std::vector<float>{-1.5f, 1.5f}));
}

TEST(Elementwise, MaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto a = ir::Tensor::of<float>({3}, {nan, 1.0f, 2.0f});
  auto b = ir::Tensor::of<float>({3}, {1.0f, nan, 3.0f});
  for (const char* op : {"Max", "Min"}) {
    auto y = values<float>(run1(binary(op, "float"), {{"a", a}, {"b", b}}));
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1])) << op;
    EXPECT_EQ(y[2], std::string(op) == "Max" ? 3.0f : 2.0f);
  }
}

TEST(Elementwise, VariadicBroadcastsAllInputs) {
  auto y = run1(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,1] a, float[3] b, float c) => (float[2,3] y) { y = Mean(a, b, c) }
  )",
                {{"a", ir::Tensor::of<float>({2, 1}, {0, 3})},
                 {"b", ir::Tensor::of<float>({3}, {0, 3, 6})},
                 {"c", ir::Tensor::scalar<float>(3)}});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 3, 2, 3, 4}));
}

TEST(Elementwise, Float16ComputesInFloat) {
  auto h = [](float f) { return ir::Float16{ir::float_to_half(f)}; };
  auto a = ir::Tensor::of<ir::Float16>({2}, {h(2048.0f), h(0.1f)});
  auto b = ir::Tensor::of<ir::Float16>({2}, {h(1.0f), h(0.2f)});
  auto y = run1(binary("Add", "float16"), {{"a", a}, {"b", b}});
  ASSERT_EQ(y.dtype(), ir::DType::kFloat16);
  const auto* p = y.data<ir::Float16>();
  EXPECT_EQ(ir::half_to_float(p[0].bits), 2048.0f);  // 2049 rounds to even in half
  EXPECT_NEAR(ir::half_to_float(p[1].bits), 0.3f, 1e-3);
}

TEST(Elementwise, LegacyBroadcastBeforeOpset7) {
  auto y = run1(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3,2] a, float[3] b) => (float[2,3,2] c) { c = Add<broadcast = 1, axis = 1>(a, b) }
  )",
                {{"a", ir::Tensor::of<float>({2, 3, 2}, std::vector<float>(12, 0.0f))},
                 {"b", ir::Tensor::of<float>({3}, {1, 2, 3})}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(Elementwise, PowMixesTypes) {
  auto y = run1(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (int64[3] a, float[3] b) => (int64[3] c) { c = Pow(a, b) }
  )",
                {{"a", ir::Tensor::of<int64_t>({3}, {2, 3, 4})},
                 {"b", ir::Tensor::of<float>({3}, {3.0f, 0.5f, -1.0f})}});
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{8, 1, 0}));
  auto z = run1(binary("Pow", "int64"), {{"a", ir::Tensor::of<int64_t>({3}, {3, -1, 2})},
                                         {"b", ir::Tensor::of<int64_t>({3}, {4, 3, -2})}});
  EXPECT_EQ(values<int64_t>(z), (std::vector<int64_t>{81, -1, 0}));
}

TEST(Elementwise, ClipWithOmittedBounds) {
  const char* only_max = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int8[4] x, int8 hi) => (int8[4] y) { y = Clip(x, , hi) }
  )";
  auto y = run1(only_max, {{"x", ir::Tensor::of<int8_t>({4}, {-128, 0, 5, 127})},
                           {"hi", ir::Tensor::scalar<int8_t>(4)}});
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{-128, 0, 4, 4}));
  auto old = run1(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[3] x) => (float[3] y) { y = Clip<min = -1.0>(x) }
  )",
                  {{"x", ir::Tensor::of<float>({3}, {-5, 0, 1e30f})}});
  EXPECT_EQ(values<float>(old), (std::vector<float>{-1, 0, 1e30f}));
}

TEST(Elementwise, CastStringsAndOutOfRange) {
  const char* to_int = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (string[5] x) => (int32[5] y) { y = Cast<to = 6>(x) }
  )";
  ir::Tensor s = ir::Tensor::of_strings({5}, {"12", "-7", "3.9", "1e2", "junk"});
  EXPECT_EQ(values<int32_t>(run1(to_int, {{"x", s}})), (std::vector<int32_t>{12, -7, 3, 100, 0}));
  const char* to_float = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (string[4] x) => (float[4] y) { y = Cast<to = 1>(x) }
  )";
  auto f = values<float>(
      run1(to_float, {{"x", ir::Tensor::of_strings({4}, {"+INF", "-inf", "NaN", "0.25"})}}));
  EXPECT_TRUE(std::isinf(f[0]) && f[0] > 0);
  EXPECT_TRUE(std::isinf(f[1]) && f[1] < 0);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], 0.25f);
  const char* to_string = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (string[4] y) { y = Cast<to = 8>(x) }
  )";
  auto str = run1(to_string,
                  {{"x", ir::Tensor::of<float>(
                             {4}, {0.1f, -2.0f, 1e-7f, std::numeric_limits<float>::infinity()})}});
  EXPECT_EQ(str.strings(), (std::vector<std::string>{"0.1", "-2", "1e-07", "INF"}));
  const char* to_u8 = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (uint8[4] y) { y = Cast<to = 2>(x) }
  )";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(
      values<uint8_t>(run1(to_u8, {{"x", ir::Tensor::of<float>({4}, {300.7f, -1.0f, nan, 2.9f})}})),
      (std::vector<uint8_t>{44, 255, 0, 2}));
}

TEST(Elementwise, ConstantEveryValueAttribute) {
  auto m = ir::parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (float f, float[2] fs, int64 i, int64[3] is, string s, string[2] ss) {
      f = Constant<value_float = 1.5>()
      fs = Constant<value_floats = [1.0, 2.0]>()
      i = Constant<value_int = 7>()
      is = Constant<value_ints = [1, 2, 3]>()
      s = Constant<value_string = "hi">()
      ss = Constant<value_strings = ["a", "b"]>()
    }
  )");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  // A sparse constant: 3x3 with two non-zeros at linear indices 1 and 8.
  ir::Graph& g = *m->graph;
  ir::Node* n = g.add_node("Constant", {}, {"sp"});
  onnx::AttributeProto a;
  a.set_name("sparse_value");
  a.set_type(onnx::AttributeProto::SPARSE_TENSOR);
  auto* st = a.mutable_sparse_tensor();
  st->add_dims(3);
  st->add_dims(3);
  st->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  st->mutable_values()->add_dims(2);
  st->mutable_values()->add_float_data(4.0f);
  st->mutable_values()->add_float_data(5.0f);
  st->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  st->mutable_indices()->add_dims(2);
  st->mutable_indices()->add_int64_data(1);
  st->mutable_indices()->add_int64_data(8);
  n->set_attr(a);
  std::vector<ir::Value*> outs = g.outputs();
  outs.push_back(n->output(0));
  g.set_outputs(outs);
  auto out = run_model(*m, {});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const auto& r = *out;
  EXPECT_EQ(values<float>(r[0]), std::vector<float>{1.5f});
  EXPECT_EQ(values<float>(r[1]), (std::vector<float>{1, 2}));
  EXPECT_EQ(values<int64_t>(r[2]), std::vector<int64_t>{7});
  EXPECT_EQ(values<int64_t>(r[3]), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(r[4].strings(), std::vector<std::string>{"hi"});
  EXPECT_EQ(r[5].strings(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r[6].dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(values<float>(r[6]), (std::vector<float>{0, 4, 0, 0, 0, 0, 0, 0, 5}));
}

TEST(Elementwise, ContribGeluFamily) {
  auto x = ir::Tensor::of<float>({2, 2}, {-1.0f, 0.5f, 2.0f, -3.0f});
  auto b = ir::Tensor::of<float>({2}, {0.5f, -0.25f});
  auto gelu = [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); };
  auto fast = [](double v) {
    return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  };
  const char* head = "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n";
  auto bias_gelu = values<float>(run1(std::string(head) + R"(
    g (float[2,2] x, float[2] b) => (float[2,2] y) { y = com.microsoft.BiasGelu(x, b) })",
                                      {{"x", x}, {"b", b}}));
  auto fast_gelu = values<float>(run1(std::string(head) + R"(
    g (float[2,2] x, float[2] b) => (float[2,2] y) { y = com.microsoft.FastGelu(x, b) })",
                                      {{"x", x}, {"b", b}}));
  auto fast_nobias = values<float>(run1(std::string(head) + R"(
    g (float[2,2] x) => (float[2,2] y) { y = com.microsoft.FastGelu(x) })",
                                        {{"x", x}}));
  for (int i = 0; i < 4; ++i) {
    const double xv = x.data<float>()[i], bv = b.data<float>()[i % 2];
    EXPECT_NEAR(bias_gelu[static_cast<size_t>(i)], gelu(xv + bv), 1e-6);
    EXPECT_NEAR(fast_gelu[static_cast<size_t>(i)], fast(xv + bv), 1e-6);
    EXPECT_NEAR(fast_nobias[static_cast<size_t>(i)], fast(xv), 1e-6);
  }
}

TEST(Elementwise, DropoutTrainingModeScalesKeptValues) {
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1000] x, float r, bool t) => (float[1000] y, bool[1000] m) {
      y, m = Dropout<seed = 3>(x, r, t)
    }
  )";
  auto m = ir::parse_model_text(text);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  std::map<std::string, ir::Tensor> in = {
      {"x", ir::Tensor::of<float>({1000}, std::vector<float>(1000, 2.0f))},
      {"r", ir::Tensor::scalar<float>(0.25f)},
      {"t", ir::Tensor::scalar<bool>(true)}};
  auto out = run_model(*m, in);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const float* y = (*out)[0].data<float>();
  const bool* mask = (*out)[1].data<bool>();
  int kept = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FLOAT_EQ(y[i], mask[i] ? 2.0f / 0.75f : 0.0f);
    kept += mask[i];
  }
  EXPECT_GT(kept, 690);  // 750 expected; 690..810 is over 4 standard deviations
  EXPECT_LT(kept, 810);
  // Inference: the identity and an all-true mask.
  in["t"] = ir::Tensor::scalar<bool>(false);
  auto inf = run_model(*m, in);
  ASSERT_TRUE(inf.is_ok());
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ((*inf)[0].data<float>()[i], 2.0f);
    EXPECT_TRUE((*inf)[1].data<bool>()[i]);
  }
}

}  // namespace
}  // namespace xopt::exec
