// split-batch: the chain of per-item ops around the activation peak runs on two halves of the
// batch when that lowers the plan's lower bound; undone (the graph as it was) when it does not.
#include <gtest/gtest.h>

#include <string>

#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// Batch 4: a 1x1 convolution expands 2 channels to 16 (the peak: a, then a and c at the pool),
// then pools and projects back to 2.
constexpr const char* kExpand = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,2,8,8] x) => (float[4,2,4,4] y)
   <float[16,2,1,1] w1 = {1, -1, 2, 0.5, -2, 1, 0.25, 3, -1, -1, 1, 1, 2, -2, 0.5, 0.5,
                          -0.5, 1, 1, 2, 3, -3, 0, 1, 1, 0, -1, 0.5, 0.75, -0.25, 2, 1},
    float[2,16,1,1] w2 = {1, 0.5, -1, 2, 0, 1, -0.5, 1, 1, 1, -1, 0.25, 2, -1, 1, 0,
                          0.5, -1, 1, 1, 2, 0, -2, 1, 0.5, 0.5, 1, -1, 1, 0.25, 1, -0.5}> {
  a = Conv(x, w1)
  b = Relu(a)
  c = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (b)
  y = Conv(c, w2)
}
)";

TEST(SplitBatch, ExpansionChainRunsOnHalves) {
  EXPECT_REWRITES("split-batch", kExpand, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,2,8,8] x) => (float[4,2,4,4] y)
   <float[16,2,1,1] w1 = {1, -1, 2, 0.5, -2, 1, 0.25, 3, -1, -1, 1, 1, 2, -2, 0.5, 0.5,
                          -0.5, 1, 1, 2, 3, -3, 0, 1, 1, 0, -1, 0.5, 0.75, -0.25, 2, 1},
    float[2,16,1,1] w2 = {1, 0.5, -1, 2, 0, 1, -0.5, 1, 1, 1, -1, 0.25, 2, -1, 1, 0,
                          0.5, -1, 1, 1, 2, 0, -2, 1, 0.5, 0.5, 1, -1, 1, 0.25, 1, -0.5},
    int64[2] a_half_sizes = {2, 2}> {
  a_half0_in, a_half1_in = Split <axis = 0> (x, a_half_sizes)
  a_half0 = Conv(a_half0_in, w1)
  b_half0 = Relu(a_half0)
  c_half0 = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (b_half0)
  y_half0 = Conv(c_half0, w2)
  a_half1 = Conv(a_half1_in, w1)
  b_half1 = Relu(a_half1)
  c_half1 = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (b_half1)
  y_half1 = Conv(c_half1, w2)
  y = Concat <axis = 0> (y_half0, y_half1)
}
)");
}

TEST(SplitBatch, LowersTheBoundAndSaysBy) {
  passes::PassContext ctx;
  auto r = test::run_passes("split-batch", kExpand, &ctx);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  // Before: a (16 KiB, Relu in place) and c (4 KiB) at the pool. After: one half's a and c, the
  // other half's input and the first half's output.
  EXPECT_EQ(test::counter(r.stats, "split-batch", "chains-split"), 1);
  EXPECT_EQ(test::counter(r.stats, "split-batch", "nodes-in-chains"), 4);
  EXPECT_GT(test::counter(r.stats, "split-batch", "bound-bytes-saved"), 8000);
}

TEST(SplitBatchDoesNotApply, BatchOfOne) {
  std::string one = kExpand;
  for (std::string from : {"float[4,2,8,8]", "float[4,2,4,4]"})
    one.replace(one.find(from), from.size(), "float[1" + from.substr(7));
  EXPECT_NOT_APPLIED("split-batch", one);
}

TEST(SplitBatchDoesNotApply, PeakOutsideAnyPerItemChain) {
  // The peak is at the MatMul, which mixes the items of its batch-less operand.
  EXPECT_NOT_APPLIED("split-batch", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,8] x, float[8,64] w) => (float[4] y) {
  h = MatMul(x, w)
  r = Relu(h)
  y = ReduceMean <axes = [1], keepdims = 0> (r)
}
)");
}

// kExpand with a constant added after the expansion: one of [1,16,8,8] broadcasts over the items,
// one of [4,16,8,8] holds an operand per item, which a half of the batch cannot take.
std::string expand_plus_constant(int items) {
  std::string values;
  for (int i = 0; i < items * 16 * 64; ++i) values += (i ? ", " : "") + std::to_string(i % 5);
  std::string text = kExpand;
  text.replace(text.find("> {"), 3,
               ", float[" + std::to_string(items) + ",16,8,8] k = {" + values + "}> {");
  text.replace(text.find("  b = Relu(a)"), 13, "  ak = Add(a, k)\n  b = Relu(ak)");
  return text;
}

TEST(SplitBatch, ConstantBroadcastOverTheItemsSplitsWithTheChain) {
  passes::PassContext ctx;
  auto r = test::run_passes("split-batch", expand_plus_constant(1), &ctx);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_EQ(test::counter(r.stats, "split-batch", "chains-split"), 1);
}

TEST(SplitBatchDoesNotApply, ConstantThatVariesAlongTheBatch) {
  EXPECT_NOT_APPLIED("split-batch", expand_plus_constant(4));
}

TEST(SplitBatchDoesNotApply, SplitThatRaisesTheBoundIsUndone) {
  // Nothing lives in the arena (x and y are graph input and output): halves would add the
  // Split/Concat buffers, so the chain is built back as it was.
  passes::PassContext ctx;
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,64] x) => (float[4,64] y) {
  y = Relu(x)
}
)";
  EXPECT_NOT_APPLIED("split-batch", model);
  auto r = test::run_passes("split-batch", model, &ctx);
  EXPECT_EQ(test::counter(r.stats, "split-batch", "splits-undone"), 1);
}

}  // namespace
}  // namespace xopt
