// The workspace cost model: im2col for Conv-like ops, col2im for ConvTranspose, one shared region.
#include <gtest/gtest.h>

#include "planner/planner.h"
#include "planner/workspace.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::GraphBuilder;

TEST(Workspace, ConvNeedsAnIm2colBufferForOneImageAndGroup) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {2, 8, 16, 16});
  ir::Value* w = b.weight("w", {12, 2, 3, 3});  // group 4: 8/4 = 2 input channels per group
  ir::Value* y = b.op("Conv", {x, w}, "y", {2, 12, 8, 8});
  b.last()->set_attr("group", int64_t{4});
  b.last()->set_attr("strides", std::vector<int64_t>{2, 2});
  b.last()->set_attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output(y);
  auto ws = node_workspace_bytes(*b.last());
  ASSERT_TRUE(ws.is_ok()) << ws.status().message();
  EXPECT_EQ(*ws, size_t{2 * 3 * 3 * 8 * 8 * 4});  // C/group * kH*kW * outH*outW * sizeof(float)
}

TEST(Workspace, PointwiseConvNeedsNone) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 8, 16, 16});
  ir::Value* w = b.weight("w", {4, 8, 1, 1});
  b.op("Conv", {x, w}, "y", {1, 4, 16, 16});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 0u);
  // A 1x1 kernel with a stride still gathers its input.
  b.last()->set_attr("strides", std::vector<int64_t>{2, 2});
  b.last()->output(0)->set_shape(ir::Shape::of({1, 4, 8, 8}));
  EXPECT_EQ(*node_workspace_bytes(*b.last()), size_t{8 * 8 * 8 * 4});
}

TEST(Workspace, Conv1dAnd3dAndFusedConv) {
  GraphBuilder b;
  ir::Value* x1 = b.input("x1", {1, 4, 100});
  ir::Value* w1 = b.weight("w1", {6, 4, 5});
  b.op("Conv", {x1, w1}, "y1", {1, 6, 96});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), size_t{4 * 5 * 96 * 4});
  ir::Value* x3 = b.input("x3", {1, 2, 4, 4, 4});
  ir::Value* w3 = b.weight("w3", {3, 2, 2, 2, 2});
  b.op("Conv", {x3, w3}, "y3", {1, 3, 3, 3, 3});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), size_t{2 * 8 * 27 * 4});
  b.op("FusedConv", {x1, w1}, "yf", {1, 6, 96}, "com.microsoft");
  EXPECT_EQ(*node_workspace_bytes(*b.last()), size_t{4 * 5 * 96 * 4});
}

TEST(Workspace, ConvTransposeNeedsACol2imBuffer) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 8, 5, 5});
  ir::Value* w = b.weight("w", {8, 3, 4, 4});  // [C, M/group, kH, kW]
  b.op("ConvTranspose", {x, w}, "y", {1, 3, 12, 12});
  b.last()->set_attr("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), size_t{3 * 16 * 25 * 4});
}

TEST(Workspace, OtherOpsNeedNoneAndTheRegionIsTheLargestNeed) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Value* w1 = b.weight("w1", {4, 3, 3, 3});
  ir::Value* c1 = b.op("Conv", {x, w1}, "c1", {1, 4, 6, 6});  // 3*9*36*4 = 3888
  ir::Value* r = b.op("Relu", {c1}, "r", {1, 4, 6, 6});
  ir::Value* w2 = b.weight("w2", {4, 4, 3, 3});
  ir::Value* c2 = b.op("Conv", {r, w2}, "c2", {1, 4, 4, 4});  // 4*9*16*4 = 2304
  b.output(c2);
  auto p = plan(b.graph());
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->node_workspace, (std::vector<size_t>{3888, 0, 2304}));
  EXPECT_EQ(p->workspace_bytes, 4096u);  // 3888 aligned to 256
  EXPECT_EQ(p->breakdown.workspace, 4096u);
}

// cuDNN pads symmetrically: unequal pads take a padded copy of the input besides the im2col buffer.
TEST(Workspace, AsymmetricPadsAddAPaddedInput) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 4, 9, 9});
  ir::Value* w = b.weight("w", {4, 1, 3, 3});
  b.op("Conv", {x, w}, "y", {1, 4, 5, 5});
  b.last()->set_attr("group", int64_t{4});
  b.last()->set_attr("strides", std::vector<int64_t>{2, 2});
  b.last()->set_attr("pads", std::vector<int64_t>{0, 0, 1, 1});
  const size_t im2col = 1 * 9 * 25 * 4;
  // Padded input bounded by (extent - 1) more per dim: 1 * 4 * 11 * 11 * 4 = 1936 -> 2048 aligned.
  EXPECT_EQ(*node_workspace_bytes(*b.last()), size_t{2048} + im2col);
}

// What the CUDA kernel takes: every (batch, head) score matrix; with a bias Q, K and V split into
// heads first; at batch > 1 the heads split and the output heads gathered, so that one
// strided-batched product covers every (batch, head) pair.
TEST(Workspace, MultiHeadAttentionNeedsItsScoreMatrices) {
  GraphBuilder b;
  ir::Value* q = b.input("q", {1, 10, 64});  // B 1, S 10, 4 heads of 16
  ir::Value* k = b.input("k", {1, 12, 64});  // L 12
  ir::Value* v = b.input("v", {1, 12, 64});
  b.op("MultiHeadAttention", {q, k, v}, "y", {1, 10, 64}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{4});
  const size_t scores = 4 * 10 * 12 * 4;  // 1920, aligned to 2048
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 2048u);
  ir::Value* bias = b.weight("bias", {192});
  b.op("MultiHeadAttention", {q, k, v, bias}, "y2", {1, 10, 64}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{4});
  const size_t q_heads = 10 * 64 * 4, kv_heads = 12 * 64 * 4;  // 2560, 3072
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 2048 + q_heads + 2 * kv_heads);
  (void)scores;
  // Batch 2: the same buffers for both items, plus the output heads.
  ir::Value* q2 = b.input("q2", {2, 10, 64});
  ir::Value* k2 = b.input("k2", {2, 12, 64});
  b.op("MultiHeadAttention", {q2, k2, k2}, "y3", {2, 10, 64}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{4});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 2 * (1920 + q_heads + 2 * kv_heads + q_heads));
}

// BERT-base at batch 32 (12 heads, S = L = 128): 2.25 MiB of scratch per item (scores 768 KiB,
// Q, K, V and output heads 384 KiB each); the batch runs in chunks of 4 (9 MiB), not all 32.
TEST(Workspace, MultiHeadAttentionRunsItsBatchInBoundedChunks) {
  EXPECT_EQ(attention_batch_chunk(32, 768 << 10), 16);
  EXPECT_EQ(attention_batch_chunk(32, 9 << 18), 4);       // 2.25 MiB
  EXPECT_EQ(attention_batch_chunk(6, (5 << 20) + 1), 3);  // the largest divisor that fits
  EXPECT_EQ(attention_batch_chunk(7, 4 << 20), 1);        // no divisor of 7 from 2 to 4
  EXPECT_EQ(attention_batch_chunk(4, 64 << 20), 1);       // one item over the bound: one at a time
  EXPECT_EQ(attention_batch_chunk(5, 0), 5);
  EXPECT_EQ(attention_batch_chunk(int64_t{1} << 40, 1 << 20), 16);  // no loop over a huge batch
  GraphBuilder b;
  ir::Value* q = b.input("q", {32, 128, 768});
  b.op("MultiHeadAttention", {q, q, q}, "y", {32, 128, 768}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{12});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), size_t{4} * (9 << 18));
}

TEST(Workspace, UnknownShapesAreAnErrorNamingTheNode) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Value* w = b.weight("w", {4, 3, 3, 3});
  ir::Value* y = b.op("Conv", {x, w}, "y", {1, 4, 6, 6});
  y->set_shape(ir::Shape());
  auto ws = node_workspace_bytes(*b.last());
  ASSERT_FALSE(ws.is_ok());
  EXPECT_NE(ws.status().message().find("y_node"), std::string::npos) << ws.status().message();
}

}  // namespace
}  // namespace xopt::planner
