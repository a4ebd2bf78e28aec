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

// Workspace in the arena: each node's scratch is a value live at its step only, so it takes the
// bytes the activations leave free there. Here c1's 3888 bytes fit beside x->c1 where c1 (576) is
// written, and the second Conv's 2304 beside r and c2: the arena grows by less than the region.
TEST(WorkspaceInArena, EachNodesScratchIsAValueLiveAtItsStep) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Value* w1 = b.weight("w1", {4, 3, 3, 3});
  ir::Value* c1 = b.op("Conv", {x, w1}, "c1", {1, 4, 6, 6});  // 576 bytes; workspace 3888
  ir::Value* r = b.op("Neg", {c1}, "r", {1, 4, 6, 6});
  ir::Value* w2 = b.weight("w2", {4, 4, 3, 3});
  ir::Value* c2 = b.op("Conv", {r, w2}, "c2", {1, 4, 4, 4});  // workspace 2304
  ir::Value* y = b.op("Neg", {c2}, "y", {1, 4, 4, 4});
  b.output(y);
  PlanOptions in;
  in.workspace_in_arena = true;
  auto p = plan(b.graph(), in);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_TRUE(p->workspace_in_arena);
  EXPECT_EQ(p->workspace_bytes, 0u);
  EXPECT_EQ(p->breakdown.workspace, 0u);
  EXPECT_EQ(p->node_workspace, (std::vector<size_t>{3888, 0, 2304, 0}));
  const PlannedValue* w = p->find(workspace_value_name(node_key(*c1->producer())));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->role, "workspace");
  EXPECT_EQ(w->bytes, 3888u);
  EXPECT_EQ(w->first_step, 0);
  EXPECT_EQ(w->last_step, 0);
  ASSERT_NE(p->find(workspace_value_name(node_key(*c2->producer()))), nullptr);
  // Peak: c1's step holds c1 (768 aligned) and its 3888 (4096 aligned) bytes of scratch.
  EXPECT_EQ(p->lower_bound, 768u + 4096u);
  EXPECT_EQ(p->arena_bytes, p->lower_bound);
  EXPECT_TRUE(check_plan(*p).is_ok());
  auto separate = plan(b.graph());
  ASSERT_TRUE(separate.is_ok());
  EXPECT_LT(p->arena_bytes, separate->arena_bytes + separate->workspace_bytes);
  // The JSON keeps it; a lying workspace value (overlapping a live activation) is refused.
  auto back = plan_from_json(plan_to_json(*p));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_TRUE(back->workspace_in_arena);
  EXPECT_EQ(back->find(workspace_value_name(node_key(*c2->producer())))->offset,
            p->find(workspace_value_name(node_key(*c2->producer())))->offset);
  MemoryPlan lie = *p;
  for (PlannedValue& v : lie.values)
    if (v.role == "workspace" && v.first_step == 0) v.offset = lie.find("c1")->offset;
  EXPECT_FALSE(check_plan(lie).is_ok());
}

// What a node's workspace may take without raising the activations' peak: c1's step holds c1
// (768) while the peak is at r's step (c1 and r: 1536).
TEST(WorkspaceInArena, SlackPerStepBelowTheActivationPeak) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Value* c1 = b.op("Conv", {x, b.weight("w1", {4, 3, 3, 3})}, "c1", {1, 4, 6, 6});
  ir::Value* r = b.op("Exp", {c1}, "r", {1, 4, 6, 6});
  ir::Value* s = b.op("Add", {c1, r}, "s", {1, 4, 6, 6});
  b.output(b.op("Neg", {s}, "y", {1, 4, 6, 6}));
  PlanOptions in;
  in.workspace_in_arena = true;
  auto p = plan(b.graph(), in);
  ASSERT_TRUE(p.is_ok());
  // Steps: c1 (c1 live), r (c1, r), s (c1, r; s in place over one of them), y.
  EXPECT_EQ(activation_slack(*p), (std::vector<size_t>{768, 0, 0, 1536 - 768}));
}

// Sizes measured elsewhere (the GPU's algorithms) replace the estimate and move the values.
TEST(WorkspaceInArena, ReplannedWithMeasuredSizes) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Value* c1 = b.op("Conv", {x, b.weight("w1", {4, 3, 3, 3})}, "c1", {1, 4, 6, 6});
  ir::Value* y = b.op("Neg", {c1}, "y", {1, 4, 6, 6});
  b.output(y);
  PlanOptions in;
  in.workspace_in_arena = true;
  auto p = plan(b.graph(), in);
  ASSERT_TRUE(p.is_ok());
  auto again = replan_with_workspace(b.graph(), *p, {10000, 0});
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ(again->node_workspace, (std::vector<size_t>{10000, 0}));
  EXPECT_EQ(again->find(workspace_value_name(node_key(*c1->producer())))->bytes, 10000u);
  EXPECT_EQ(again->arena_bytes, 768u + 10240u);
  EXPECT_FALSE(replan_with_workspace(b.graph(), *p, {1}).is_ok());  // one size per node
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

// The fused kernel: no present outputs and head sizes in [1, 128]; it needs no workspace.
TEST(Workspace, AttentionFusedAppliesUpToHead128WithoutPresentOutputs) {
  EXPECT_TRUE(attention_fused_applies(64, 64, false));  // BERT-base
  EXPECT_TRUE(attention_fused_applies(1, 1, false));
  EXPECT_TRUE(attention_fused_applies(32, 48, false));
  EXPECT_TRUE(attention_fused_applies(kAttentionFusedMaxHead, kAttentionFusedMaxHead, false));
  EXPECT_FALSE(attention_fused_applies(kAttentionFusedMaxHead + 1, 64, false));
  EXPECT_FALSE(attention_fused_applies(64, kAttentionFusedMaxHead + 1, false));
  EXPECT_FALSE(attention_fused_applies(0, 64, false));
  EXPECT_FALSE(attention_fused_applies(64, 0, false));
  EXPECT_FALSE(attention_fused_applies(64, 64, true));  // present_key/present_value asked for
  EXPECT_EQ(kAttentionFusedMaxHead, 128);
}

TEST(Workspace, FusedMultiHeadAttentionNeedsNone) {
  GraphBuilder b;
  // BERT-base at batch 32: 12 heads of 64, S = L = 128, with a bias.
  ir::Value* q = b.input("q", {32, 128, 768});
  ir::Value* bias = b.weight("bias", {2304});
  b.op("MultiHeadAttention", {q, q, q, bias}, "y", {32, 128, 768}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{12});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 0u);
  // Query/key heads of 32, value heads of 48, keys longer than queries.
  ir::Value* q2 = b.input("q2", {2, 50, 128});
  ir::Value* k2 = b.input("k2", {2, 70, 128});
  ir::Value* v2 = b.input("v2", {2, 70, 192});
  b.op("MultiHeadAttention", {q2, k2, v2}, "y2", {2, 50, 192}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{4});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 0u);
  // Key and value already split into heads [B, N, L, H] (128 is the largest fused head).
  ir::Value* q3 = b.input("q3", {2, 10, 256});
  ir::Value* k3 = b.input("k3", {2, 2, 12, 128});
  b.op("MultiHeadAttention", {q3, k3, k3}, "y3", {2, 10, 256}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{2});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 0u);
  // Value heads of 129: the unfused path's buffers.
  ir::Value* v4 = b.input("v4", {2, 2, 12, 129});
  b.op("MultiHeadAttention", {q3, k3, v4}, "y4", {2, 10, 258}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{2});
  EXPECT_GT(*node_workspace_bytes(*b.last()), 0u);
}

// The unfused path (head sizes over 128, or present outputs): what the CUDA kernel takes: every
// (batch, head) score matrix; with a bias Q, K and V split into heads first; at batch > 1 the heads
// split and the output heads gathered, so that one strided-batched product covers every
// (batch, head) pair.
TEST(Workspace, MultiHeadAttentionNeedsItsScoreMatrices) {
  GraphBuilder b;
  ir::Value* q = b.input("q", {1, 10, 640});  // B 1, S 10, 4 heads of 160
  ir::Value* k = b.input("k", {1, 12, 640});  // L 12
  ir::Value* v = b.input("v", {1, 12, 640});
  b.op("MultiHeadAttention", {q, k, v}, "y", {1, 10, 640}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{4});
  const size_t scores = 4 * 10 * 12 * 4;  // 1920, aligned to 2048
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 2048u);
  ir::Value* bias = b.weight("bias", {1920});
  b.op("MultiHeadAttention", {q, k, v, bias}, "y2", {1, 10, 640}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{4});
  const size_t q_heads = 10 * 640 * 4, kv_heads = 12 * 640 * 4;  // 25600, 30720 (256-multiples)
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 2048 + q_heads + 2 * kv_heads);
  // Batch 2: the same buffers for both items, plus the output heads.
  ir::Value* q2 = b.input("q2", {2, 10, 640});
  ir::Value* k2 = b.input("k2", {2, 12, 640});
  b.op("MultiHeadAttention", {q2, k2, k2}, "y3", {2, 10, 640}, "com.microsoft");
  b.last()->set_attr("num_heads", int64_t{4});
  EXPECT_EQ(*node_workspace_bytes(*b.last()), 2 * (scores + q_heads + 2 * kv_heads + q_heads));
}

// BERT-base at batch 32 (12 heads, S = L = 128) with present_key and present_value asked for (the
// unfused path): 1.5 MiB of scratch per item (scores 768 KiB, Q and output heads 384 KiB each; K
// and V go to the present outputs); the batch runs in chunks of 8 (12 MiB), not all 32.
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
  ir::Node* node =
      b.graph().add_node("MultiHeadAttention", {q, q, q}, {"y", "pk", "pv"}, "com.microsoft");
  node->set_attr("num_heads", int64_t{12});
  EXPECT_EQ(*node_workspace_bytes(*node), size_t{8} * (3 << 19));
  // Only present_key: V is split into the workspace too (1.875 MiB per item, chunks of 8).
  ir::Node* node2 =
      b.graph().add_node("MultiHeadAttention", {q, q, q}, {"y2", "pk2"}, "com.microsoft");
  node2->set_attr("num_heads", int64_t{12});
  EXPECT_EQ(*node_workspace_bytes(*node2), size_t{8} * (15 << 17));
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
