// Softmax / LogSoftmax, LayerNormalization and SkipLayerNormalization on the GPU against the CPU
// reference: coerced (opset < 13) and single-axis semantics, rows along the last axis and along an
// inner axis, long rows, float4 and scalar paths, rows cached in shared memory and not, optional
// inputs and every optional output.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 17, const std::string& inits = "") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         ", \"com.microsoft\" : 1]>\ng (" + inputs + ") => (" + outputs + ") " +
         (inits.empty() ? "" : "<" + inits + "> ") + "{\n  " + body + "\n}";
}

TEST(CudaSoftmax, Axes) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    SCOPED_TRACE(op);
    const std::string o(op);
    // Opset 13: one axis, the last (rows) or an inner one (columns).
    expect_cuda_matches_cpu(model("float[2,3,40] x", "float[2,3,40] y", "y = " + o + " (x)", 13));
    expect_cuda_matches_cpu(
        model("float[2,3,40] x", "float[2,3,40] y", "y = " + o + " <axis = 1> (x)", 13));
    expect_cuda_matches_cpu(
        model("float[2,3,40] x", "float[2,3,40] y", "y = " + o + " <axis = -3> (x)", 13));
    // Opset 11: coerced to 2-D at axis (default 1).
    expect_cuda_matches_cpu(model("float[2,3,40] x", "float[2,3,40] y", "y = " + o + " (x)", 11));
    expect_cuda_matches_cpu(
        model("float[2,3,40] x", "float[2,3,40] y", "y = " + o + " <axis = 2> (x)", 11));
    expect_cuda_matches_cpu(
        model("float[2,3,40] x", "float[2,3,40] y", "y = " + o + " <axis = 0> (x)", 11));
    // Short rows, attention-shaped rows, and a long row (512 threads).
    expect_cuda_matches_cpu(model("float[7,5] x", "float[7,5] y", "y = " + o + " (x)", 13));
    expect_cuda_matches_cpu(
        model("float[1,4,16,128] x", "float[1,4,16,128] y", "y = " + o + " (x)", 13));
    expect_cuda_matches_cpu(model("float[3,5000] x", "float[3,5000] y", "y = " + o + " (x)", 13));
  }
}

TEST(CudaLayerNorm, LastAxis) {
  // float4 + cached row.
  expect_cuda_matches_cpu(model("float[2,5,64] x, float[64] s, float[64] b", "float[2,5,64] y",
                                "y = LayerNormalization (x, s, b)"));
  // Odd width: the scalar path; no bias; another epsilon.
  expect_cuda_matches_cpu(model("float[3,7] x, float[7] s", "float[3,7] y",
                                "y = LayerNormalization <epsilon = 0.001> (x, s)"));
  // A row too long for the shared-memory cache.
  expect_cuda_matches_cpu(model("float[2,10000] x, float[10000] s, float[10000] b",
                                "float[2,10000] y", "y = LayerNormalization (x, s, b)"));
}

TEST(CudaLayerNorm, AxisAndStatistics) {
  expect_cuda_matches_cpu(model("float[2,3,4] x, float[3,4] s, float[3,4] b", "float[2,3,4] y",
                                "y = LayerNormalization <axis = 1> (x, s, b)"));
  expect_cuda_matches_cpu(model("float[2,3,4] x, float[1,3,4] s",
                                "float[2,3,4] y, float[2,1,1] m, float[2,1,1] r",
                                "y, m, r = LayerNormalization <axis = -2> (x, s)"));
  expect_cuda_matches_cpu(model("float[4,8] x, float[8] s, float[8] b",
                                "float[4,8] y, float[4,1] m, float[4,1] r",
                                "y, m, r = LayerNormalization (x, s, b)"));
}

TEST(CudaSkipLayerNorm, OptionalInputsAndOutputs) {
  const std::string sig = "float[2,5,16] x, float[2,5,16] k, float[16] g, float[16] b, float[16] c";
  expect_cuda_matches_cpu(
      model(sig, "float[2,5,16] y", "y = com.microsoft.SkipLayerNormalization (x, k, g, b, c)"));
  expect_cuda_matches_cpu(
      model(sig, "float[2,5,16] y, float[2,5,1] m, float[2,5,1] r, float[2,5,16] s",
            "y, m, r, s = com.microsoft.SkipLayerNormalization <epsilon = 0.00001> (x, k, g, b, "
            "c)"));
  expect_cuda_matches_cpu(model("float[2,5,16] x, float[2,5,16] k, float[16] g", "float[2,5,16] y",
                                "y = com.microsoft.SkipLayerNormalization (x, k, g)"));
  // Skip broadcast over the batch; odd hidden size (scalar path).
  expect_cuda_matches_cpu(model("float[3,4,9] x, float[4,9] k, float[9] g, float[9] b",
                                "float[3,4,9] y, float[3,4,1] m, float[3,4,1] r, float[3,4,9] s",
                                "y, m, r, s = com.microsoft.SkipLayerNormalization (x, k, g, b)"));
}

}  // namespace
}  // namespace xopt
