// Hand-computed cases for the recurrent and quantized kernels, and their shape inference: rounding
// ties and saturation, blocked scales, an all-zero DynamicQuantizeLinear, sequence_lens with the
// reverse direction, one activation list shared by both directions, and error messages.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/shape_inference.h"
#include "ir/text.h"
#include "tests/util/run_one_node.h"

namespace xopt::exec {
namespace {

using ir::Tensor;

using test::run_one;
using test::values;

TEST(QuantizeLinearTest, TiesRoundToEvenAndSaturate) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[8] x, float s, int8 z) => (int8[8] y) { y = QuantizeLinear(x, s, z) })";
  // x / 0.5 = -5, -3, -1, 1, 3, 5 (ties of 2.5 steps), 400, -400.
  auto out =
      run_one(text, {Tensor::of<float>({8}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 200, -200}),
                     Tensor::scalar<float>(0.5f), Tensor::scalar<int8_t>(1)});
  // round(-5)=-5 ... exact; then +1; 400+1 saturates to 127, -399 to -128.
  EXPECT_EQ(values<int8_t>(out[0]), (std::vector<int8_t>{-4, -2, 0, 2, 4, 6, 127, -128}));
  // Scale 2: x / 2 = -1.25, -0.75, -0.25, 0.25, 0.75, 1.25; and 0.5 / 1 ties.
  auto ties =
      run_one(text, {Tensor::of<float>({8}, {0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, 4.5f}),
                     Tensor::scalar<float>(1.0f), Tensor::scalar<int8_t>(0)});
  EXPECT_EQ(values<int8_t>(ties[0]), (std::vector<int8_t>{0, 2, 2, 4, 0, -2, -2, 4}));
}

TEST(QuantizeLinearTest, BlockedScaleAndShapeErrors) {
  const char* text = R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] x, float[2,2] s, uint8[2,2] z) => (uint8[2,3] y) {
      y = QuantizeLinear <axis = 1, block_size = 2> (x, s, z)
    })";
  // Blocks along dim 1: columns {0, 1} use s[:, 0], column {2} uses s[:, 1].
  auto out = run_one(text, {Tensor::of<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                            Tensor::of<float>({2, 2}, {1, 0.5f, 2, 0.25f}),
                            Tensor::of<uint8_t>({2, 2}, {10, 20, 30, 40})});
  EXPECT_EQ(values<uint8_t>(out[0]), (std::vector<uint8_t>{11, 12, 26, 32, 32, 64}));
  Status s;
  run_one(text,
          {Tensor::of<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::of<float>({2, 1}, {1, 1}),
           Tensor::of<uint8_t>({2, 1}, {0, 0})},
          &s);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("blocked scale"), std::string::npos) << s.message();
}

TEST(DequantizeLinearTest, PerAxisNegativeAxis) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int8[2,2] x, float[2] s, int8[2] z) => (float[2,2] y) {
      y = DequantizeLinear <axis = -1> (x, s, z)
    })";
  auto out =
      run_one(text, {Tensor::of<int8_t>({2, 2}, {-128, 127, 0, 5}),
                     Tensor::of<float>({2}, {0.5f, 2.0f}), Tensor::of<int8_t>({2}, {-1, 1})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{-63.5f, 252, 0.5f, 8}));
}

// All zeros: scale 1 and zero point 0 (onnxruntime's rule), not a division by zero.
TEST(DynamicQuantizeLinearTest, AllZeros) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 11]>
    g (float[3] x) => (uint8[3] y, float s, uint8 z) { y, s, z = DynamicQuantizeLinear(x) })";
  auto out = run_one(text, {Tensor::of<float>({3}, {0, 0, 0})});
  EXPECT_EQ(values<uint8_t>(out[0]), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{1.0f}));
  EXPECT_EQ(values<uint8_t>(out[2]), (std::vector<uint8_t>{0}));
}

// Per-row zero point of A ([M]) and per-column of B ([N]), computed by hand.
TEST(MatMulIntegerTest, PerRowAndPerColumnZeroPoints) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 10]>
    g (uint8[2,2] a, uint8[2,2] b, uint8[2] az, uint8[2] bz) => (int32[2,2] y) {
      y = MatMulInteger(a, b, az, bz)
    })";
  auto out = run_one(
      text, {Tensor::of<uint8_t>({2, 2}, {1, 2, 3, 4}), Tensor::of<uint8_t>({2, 2}, {5, 6, 7, 8}),
             Tensor::of<uint8_t>({2}, {1, 2}), Tensor::of<uint8_t>({2}, {0, 1})});
  // A - az = [[0, 1], [1, 2]]; B - bz = [[5, 5], [7, 7]].
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{7, 7, 19, 19}));
}

// RNN with identity-like weights and Affine / ThresholdedRelu so every step is checkable by hand.
// Reverse direction with sequence_lens {3, 1}: entry 1 runs only its step 0; Y past its length is
// 0.
TEST(RecurrentTest, ReverseWithSequenceLensByHand) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[3,2,1] x, float[1,1,1] w, float[1,1,1] r, float[1,2] b, int32[2] lens)
        => (float[3,1,2,1] y, float[1,2,1] yh) {
      y, yh = RNN <hidden_size = 1, direction = "reverse", activations = ["Affine"],
                   activation_alpha = [1.0], activation_beta = [0.0]> (x, w, r, b, lens)
    })";
  // h_t = x_t + 0.5 h_{t+1} (R = 0.5), processed from the end of each sequence.
  auto out = run_one(text, {Tensor::of<float>({3, 2, 1}, {1, 10, 2, 20, 4, 40}),
                            Tensor::of<float>({1, 1, 1}, {1}), Tensor::of<float>({1, 1, 1}, {0.5f}),
                            Tensor::of<float>({1, 2}, {0, 0}), Tensor::of<int32_t>({2}, {3, 1})});
  // Entry 0: h2 = 4, h1 = 2 + 2 = 4, h0 = 1 + 2 = 3. Entry 1: h0 = 10, then zeros.
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{3, 10, 4, 0, 4, 0}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{3, 10}));
}

// A one-direction activation list serves both directions of a bidirectional layer; its alpha is
// consumed once per function that takes one.
TEST(RecurrentTest, SharedActivationListAndAlphaOrder) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[1,1,1] x, float[2,1,1] w, float[2,1,1] r) => (float[1,2,1,1] y) {
      y = RNN <hidden_size = 1, direction = "bidirectional", activations = ["LeakyRelu"],
               activation_alpha = [0.5]> (x, w, r)
    })";
  auto out =
      run_one(text, {Tensor::of<float>({1, 1, 1}, {-2}), Tensor::of<float>({2, 1, 1}, {1, 3}),
                     Tensor::of<float>({2, 1, 1}, {0, 0})});
  // Forward: LeakyRelu(-2) with alpha 0.5 = -1. Reverse: the list repeated with the same alpha:
  // -6 * 0.5 = -3.
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{-1, -3}));
}

TEST(RecurrentTest, ErrorsNameTheProblem) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[2,1,3] x, float[1,8,3] w, float[1,8,2] r) => (float[2,1,1,2] y) {
      y = LSTM <hidden_size = 2> (x, w, r)
    })";
  Status s;
  run_one(text,
          {Tensor(ir::DType::kFloat, {2, 1, 3}), Tensor(ir::DType::kFloat, {1, 8, 3}),
           Tensor(ir::DType::kFloat, {1, 8, 2})},
          &s);
  EXPECT_TRUE(s.is_ok()) << s.message();
  run_one(text,
          {Tensor(ir::DType::kFloat, {2, 1, 3}), Tensor(ir::DType::kFloat, {1, 6, 3}),
           Tensor(ir::DType::kFloat, {1, 8, 2})},
          &s);
  EXPECT_NE(s.message().find("W is [1,6,3], expected [1,8,3]"), std::string::npos) << s.message();
}

// ---- shape inference ----

std::string infer(const std::string& text, const std::vector<std::string>& values) {
  auto m = ir::parse_model_text(text);
  if (!m.is_ok()) return "parse: " + m.status().message();
  ir::InferOptions o;
  o.strict = true;
  Status s = ir::infer_shapes(*m->graph, o);
  if (!s.is_ok()) return "error: " + s.message();
  std::string out;
  for (const auto& v : values) {
    const ir::Value* val = m->graph->find_value(v);
    out += (out.empty() ? "" : " ") + std::string(ir::dtype_name(val->dtype())) +
           val->shape().to_string();
  }
  return out;
}

TEST(RecurrentInference, LayoutsDirectionsAndHiddenFromR) {
  EXPECT_EQ(infer(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[S,N,3] x, float[2,16,3] w, float[2,16,4] r) => (y, yh, yc) {
      y, yh, yc = LSTM <direction = "bidirectional"> (x, w, r)
    })",
                  {"y", "yh", "yc"}),
            "float[S,2,N,4] float[2,N,4] float[2,N,4]");
  EXPECT_EQ(infer(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (double[N,S,3] x, double[1,15,3] w, double[1,15,5] r) => (y, yh) {
      y, yh = GRU <hidden_size = 5, layout = 1> (x, w, r)
    })",
                  {"y", "yh"}),
            "double[N,S,1,5] double[N,1,5]");
  EXPECT_EQ(infer(R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[S,N,3] x, int8[1,3,8] w, int8[1,2,8] r, float[1] ws, int8[1] wz, float[1] rs,
       int8[1] rz) => (y) {
      y = com.microsoft.DynamicQuantizeLSTM (x, w, r, , , , , , ws, wz, rs, rz)
    })",
                  {"y"}),
            "float[S,1,N,2]");
  EXPECT_NE(infer(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[2,1,3] x, float[1,4,3] w, float[1,4,4] r) => (y) {
      y = RNN <direction = "sideways"> (x, w, r)
    })",
                  {"y"})
                .find("direction 'sideways'"),
            std::string::npos);
}

TEST(QuantInference, OutputTypesFollowTheOpset) {
  // QuantizeLinear: the zero point's type; output_dtype (21+); uint8 by default.
  EXPECT_EQ(infer(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,4] x, float s, int16 z) => (a, b, c) {
      a = QuantizeLinear(x, s, z)
      b = QuantizeLinear <output_dtype = 3> (x, s)
      c = QuantizeLinear(x, s)
    })",
                  {"a", "b", "c"}),
            "int16[2,4] int8[2,4] uint8[2,4]");
  // DequantizeLinear: float before 19, the scale's type from 19.
  EXPECT_EQ(infer(R"(<ir_version: 8, opset_import: ["" : 19]>
    g (uint8[3] x, float16 s) => (y) { y = DequantizeLinear(x, s) })",
                  {"y"}),
            "float16[3]");
  EXPECT_NE(infer(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (uint8[2,3] x, float[2] s) => (y) { y = DequantizeLinear <axis = 1> (x, s) })",
                  {"y"})
                .find("per-axis scale [2]"),
            std::string::npos);
  EXPECT_EQ(infer(R"(<ir_version: 8, opset_import: ["" : 10]>
    g (uint8[1,3,5,5] x, float xs, uint8 xz, int8[4,3,3,3] w, float ws, int8 wz, float ys,
       uint8 yz, int32[4] b, uint8[N,2,3] a, int8[3,6] m) => (q, ci, mi) {
      q = QLinearConv <pads = [1,1,1,1]> (x, xs, xz, w, ws, wz, ys, yz, b)
      ci = ConvInteger <strides = [2,2]> (x, w)
      mi = MatMulInteger(a, m)
    })",
                  {"q", "ci", "mi"}),
            "uint8[1,4,5,5] int32[1,4,2,2] int32[N,2,6]");
}

// QLinearSoftmax over [0, 255] with y_scale 1e-30: floor(1 / y_scale) * the max's share
// overflows float; onnxruntime converts that to uint32 (undefined), here it saturates. The row's
// smallest value (exp(-255 * 0.1) of the max) still rounds to a large number and saturates too.
TEST(QOperatorTest, SoftmaxPastUint32Saturates) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (uint8[1,2] x, float xs, uint8 xz, float ys, uint8 yz) => (uint8[1,2] y) {
      y = com.microsoft.QLinearSoftmax <axis = 1, opset = 13> (x, xs, xz, ys, yz)
    })";
  auto out = run_one(text, {Tensor::of<uint8_t>({1, 2}, {0, 255}), Tensor::scalar<float>(0.1f),
                            Tensor::scalar<uint8_t>(0), Tensor::scalar<float>(1e-30f),
                            Tensor::scalar<uint8_t>(0)});
  EXPECT_EQ(values<uint8_t>(out[0]), (std::vector<uint8_t>{255, 255}));
}

// A zero point must be an 8-bit integer (a float one would be cast to int, undefined past its
// range).
TEST(QOperatorTest, FloatZeroPointIsRefused) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (uint8[2] x, float xs, float xz, float ys, uint8 yz) => (uint8[2] y) {
      y = com.microsoft.QLinearSigmoid (x, xs, xz, ys, yz)
    })";
  Status s;
  run_one(text,
          {Tensor::of<uint8_t>({2}, {0, 255}), Tensor::scalar<float>(0.1f),
           Tensor::scalar<float>(1e30f), Tensor::scalar<float>(0.01f), Tensor::scalar<uint8_t>(0)},
          &s);
  EXPECT_NE(s.message().find("X_zero_point must be uint8 or int8, got float"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace xopt::exec
