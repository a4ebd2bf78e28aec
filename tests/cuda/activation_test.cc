// Unary math, activations and the Gelu family on the GPU against the CPU reference: every op on a
// float4-sized and an odd-sized input, attributes, Clip in both opset forms, integer Relu / Abs /
// Neg / Sign, and BiasGelu / FastGelu with a row bias.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/lowp_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 17, const std::string& inits = "") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         ", \"com.microsoft\" : 1]>\ng (" + inputs + ") => (" + outputs + ") " +
         (inits.empty() ? "" : "<" + inits + "> ") + "{\n  " + body + "\n}";
}

// y = op(x) on [2,3,8] (float4 path) and [5,7] (scalar path).
void check_unary(const std::string& op, const std::string& attrs = "", int opset = 17) {
  SCOPED_TRACE(op + attrs);
  expect_cuda_matches_cpu(
      model("float[2,3,8] x", "float[2,3,8] y", "y = " + op + attrs + " (x)", opset));
  expect_cuda_matches_cpu(
      model("float[5,7] x", "float[5,7] y", "y = " + op + attrs + " (x)", opset));
}

TEST(CudaActivation, UnaryMath) {
  for (const char* op :
       {"Relu", "Abs",   "Neg",   "Sign",     "Sigmoid",  "Tanh",     "Exp", "Reciprocal",
        "Erf",  "Floor", "Ceil",  "Round",    "Sin",      "Cos",      "Tan", "Atan",
        "Sinh", "Cosh",  "Asinh", "Softplus", "Softsign", "HardSwish"})
    check_unary(op);
}

// Ops with a restricted domain, on inputs (uniform in [-2, 2)) mapped into it: the reference must
// hold no NaN.
TEST(CudaActivation, RestrictedDomains) {
  const std::string inits = "float[1] half = {0.45}, float[1] one = {1.0}";
  // Near the domain edges (atanh'(0.9) ~ 5) the half types' rounding of the intermediate is
  // amplified: against float32 the half-precision runs get 32 of the type's epsilon.
  test::LowpCase lc;
  lc.fp32_ulps = 32;
  const auto expect_cuda_matches_cpu = [&](const std::string& text) {
    test::expect_cuda_matches_cpu_all_types(text, test::CudaCase{}, lc);
  };
  for (const char* op : {"Log", "Sqrt"})
    expect_cuda_matches_cpu(model("float[2,3,8] x", "float[2,3,8] y",
                                  "a = Abs (x)\n  y = " + std::string(op) + " (a)", 17, inits));
  for (const char* op : {"Asin", "Acos", "Atanh"})
    expect_cuda_matches_cpu(model("float[5,7] x", "float[5,7] y",
                                  "a = Mul (x, half)\n  y = " + std::string(op) + " (a)", 17,
                                  inits));
  expect_cuda_matches_cpu(model("float[5,7] x", "float[5,7] y",
                                "a = Abs (x)\n  b = Add (a, one)\n  y = Acosh (b)", 17, inits));
}

TEST(CudaActivation, Attributes) {
  check_unary("LeakyRelu");
  check_unary("LeakyRelu", "<alpha = 0.2>");
  check_unary("Elu", "<alpha = 0.5>");
  check_unary("Selu");
  check_unary("Selu", "<alpha = 1.5, gamma = 2.0>");
  check_unary("Celu", "<alpha = 2.0>");
  check_unary("ThresholdedRelu", "<alpha = 0.5>");
  check_unary("HardSigmoid");
  check_unary("HardSigmoid", "<alpha = 0.3, beta = 0.4>");
  check_unary("Gelu", "", 20);
  check_unary("Gelu", "<approximate = \"tanh\">", 20);
}

TEST(CudaActivation, Clip) {
  check_unary("Clip", "<min = -0.5, max = 1.0>", 6);
  check_unary("Clip", "<max = 1.0>", 6);
  expect_cuda_matches_cpu(model("float[4,6] x", "float[4,6] y", "y = Clip (x, lo, hi)", 13,
                                "float lo = {-1.0}, float hi = {0.5}"));
  expect_cuda_matches_cpu(
      model("float[4,6] x", "float[4,6] y", "y = Clip (x, lo)", 13, "float lo = {0.0}"));
  expect_cuda_matches_cpu(
      model("float[4,6] x", "float[4,6] y", "y = Clip (x, , hi)", 13, "float hi = {0.25}"));
  expect_cuda_matches_cpu(model("float[4,6] x", "float[4,6] y", "y = Clip (x)", 13));
  // Bounds computed at run time: read on the device.
  test::CudaCase c;
  c.inputs["lo"] = ir::Tensor::of<float>({1}, {-0.75f});
  c.inputs["hi"] = ir::Tensor::of<float>({1}, {1.25f});
  expect_cuda_matches_cpu(
      model("float[4,6] x, float[1] lo, float[1] hi", "float[4,6] y", "y = Clip (x, lo, hi)", 13),
      c);
  c.inputs.erase("lo");
  expect_cuda_matches_cpu(
      model("float[4,6] x, float[1] hi", "float[4,6] y", "y = Clip (x, , hi)", 13), c);
}

TEST(CudaActivation, IntegerAndBool) {
  for (const char* op : {"Relu", "Abs", "Neg", "Sign"}) {
    SCOPED_TRACE(op);
    expect_cuda_matches_cpu(
        model("int64[3,5] x", "int64[3,5] y", "n = Neg (x)\n  y = " + std::string(op) + " (n)"));
    expect_cuda_matches_cpu(model("int32[9] x", "int32[9] y", "y = " + std::string(op) + " (x)"));
  }
  expect_cuda_matches_cpu(model("bool[2,9] x", "bool[2,9] y", "y = Not (x)"));
  expect_cuda_matches_cpu(model("float[4,4] x", "bool[4,4] y", "s = Sqrt (x)\n  y = IsNaN (s)"));
  expect_cuda_matches_cpu(model("float[4,4] x", "bool[4,4] y", "y = IsInf (x)", 17));
}

TEST(CudaActivation, ContribGelu) {
  expect_cuda_matches_cpu(
      model("float[2,5,16] x", "float[2,5,16] y", "y = com.microsoft.Gelu (x)"));
  expect_cuda_matches_cpu(
      model("float[2,5,16] x", "float[2,5,16] y", "y = com.microsoft.FastGelu (x)"));
  // Row bias: float4 path (16) and scalar path (7).
  expect_cuda_matches_cpu(model("float[2,5,16] x, float[16] b", "float[2,5,16] y",
                                "y = com.microsoft.FastGelu (x, b)"));
  expect_cuda_matches_cpu(
      model("float[3,7] x, float[7] b", "float[3,7] y", "y = com.microsoft.FastGelu (x, b)"));
  expect_cuda_matches_cpu(model("float[2,5,16] x, float[16] b", "float[2,5,16] y",
                                "y = com.microsoft.BiasGelu (x, b)"));
  expect_cuda_matches_cpu(
      model("float[3,7] x, float[7] b", "float[3,7] y", "y = com.microsoft.BiasGelu (x, b)"));
}

}  // namespace
}  // namespace xopt
