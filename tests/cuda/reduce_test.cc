// Reductions and ArgMax / ArgMin on the GPU against the CPU reference: axes as attribute and as
// constant input, negative axes, keepdims, noop_with_empty_axes, trailing rows (warp and block per
// row), inner and alternating axes (thread per output), every Reduce op.
#include <gtest/gtest.h>

#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace xopt {
namespace {

using test::expect_cuda_matches_cpu;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 18, const std::string& inits = "") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + inputs +
         ") => (" + outputs + ") " + (inits.empty() ? "" : "<" + inits + "> ") + "{\n  " + body +
         "\n}";
}

// op over `axes` (constant input at opset 18, attribute at 13) of x [3,4,5].
void check(const std::string& op, const std::string& axes, const std::string& out,
           bool keepdims = true) {
  SCOPED_TRACE(op + " axes " + axes);
  const std::string kd = keepdims ? "" : " <keepdims = 0>";
  int n = 1;
  for (char c : axes) n += c == ',';
  expect_cuda_matches_cpu(model("float[3,4,5] x", "float" + out + " y",
                                "y = " + op + kd + " (x, a)", 18,
                                "int64[" + std::to_string(n) + "] a = {" + axes + "}"));
  const std::string attrs =
      keepdims ? " <axes = [" + axes + "]>" : " <axes = [" + axes + "], keepdims = 0>";
  if (op != "ReduceSum")
    expect_cuda_matches_cpu(
        model("float[3,4,5] x", "float" + out + " y", "y = " + op + attrs + " (x)", 13));
}

TEST(CudaReduce, EveryOpEveryAxisPattern) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"}) {
    check(op, "2", "[3,4,1]");        // trailing: warp per row
    check(op, "-1", "[3,4]", false);  // negative axis
    check(op, "1", "[3,1,5]");        // inner axis: thread per output
    check(op, "0, 2", "[1,4,1]");     // alternating
    check(op, "1, 2", "[3]", false);  // trailing pair merged
    // Everything (a product of 60 inputs in [-2, 2) is too small to check).
    if (std::string(op) != "ReduceProd") check(op, "0, 1, 2", "[1,1,1]");
  }
}

TEST(CudaReduce, LogSumOfPositives) {
  expect_cuda_matches_cpu(model("float[3,4,5] x", "float[3,1,5] y",
                                "p = Abs (x)\n  y = ReduceLogSum (p, a)", 18, "int64[1] a = {1}"));
}

TEST(CudaReduce, AxesOmittedAndNoop) {
  expect_cuda_matches_cpu(model("float[3,4,5] x", "float[1,1,1] y", "y = ReduceMean (x)"));
  expect_cuda_matches_cpu(
      model("float[3,4,5] x", "float[3,4,5] y", "y = ReduceL2 <noop_with_empty_axes = 1> (x)"));
  expect_cuda_matches_cpu(
      model("float[3,4,5] x", "float y", "y = ReduceSum <keepdims = 0> (x)", 13));
}

TEST(CudaReduce, LongRowsAndGlobalPooling) {
  // Block per row (many elements per output), and a GlobalAveragePool-shaped mean.
  expect_cuda_matches_cpu(
      model("float[2,6000] x", "float[2,1] y", "y = ReduceSum (x, a)", 18, "int64[1] a = {1}"));
  expect_cuda_matches_cpu(model("float[2,8,7,7] x", "float[2,8,1,1] y", "y = ReduceMean (x, a)", 18,
                                "int64[2] a = {2, 3}"));
  // Columns: 32 x 16 threads per 32 outputs (a partial block of 37).
  for (const char* op : {"ReduceMax", "ReduceMean", "ReduceLogSumExp", "ReduceL2"})
    expect_cuda_matches_cpu(model("float[64,300] x", "float[1,300] y",
                                  std::string("y = ") + op + " (x, a)", 18, "int64[1] a = {0}"));
  expect_cuda_matches_cpu(model("float[100,3,37] x", "float[3,37] y",
                                "y = ReduceSum <keepdims = 0> (x, a)", 18, "int64[1] a = {0}"));
}

TEST(CudaArgExtreme, AxesKeepdimsLast) {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    SCOPED_TRACE(op);
    const std::string o(op);
    expect_cuda_matches_cpu(
        model("float[3,4,5] x", "int64[3,1,5] y", "y = " + o + " <axis = 1> (x)", 13));
    expect_cuda_matches_cpu(
        model("float[3,4,5] x", "int64[3,4] y", "y = " + o + " <axis = -1, keepdims = 0> (x)", 13));
    expect_cuda_matches_cpu(model("float[3,4,5] x", "int64[1,4,5] y", "y = " + o + " (x)", 13));
    // Long rows (a block per row), ties everywhere (rounded inputs): first and last index.
    expect_cuda_matches_cpu(model("float[3,1000] x", "int64[3,1] y",
                                  "r = Round (x)\n  y = " + o + " <axis = 1> (r)", 13));
    expect_cuda_matches_cpu(
        model("float[3,1000] x", "int64[3,1] y",
              "r = Round (x)\n  y = " + o + " <axis = 1, select_last_index = 1> (r)", 13));
    // Ties (rounded inputs): first and last index.
    expect_cuda_matches_cpu(
        model("float[6,5] x", "int64[6,1] y", "r = Round (x)\n  y = " + o + " <axis = 1> (r)", 13));
    expect_cuda_matches_cpu(
        model("float[6,5] x", "int64[6,1] y",
              "r = Round (x)\n  y = " + o + " <axis = 1, select_last_index = 1> (r)", 13));
  }
}

}  // namespace
}  // namespace xopt
