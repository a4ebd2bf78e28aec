// Views and in-place reuse: when they apply and, as importantly, when they must not.
#include <gtest/gtest.h>

#include "planner/aliasing.h"
#include "planner/planner.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::GraphBuilder;

const PlannedValue& get(const MemoryPlan& p, const std::string& name) {
  const PlannedValue* v = p.find(name);
  EXPECT_NE(v, nullptr) << name;
  static PlannedValue none;
  return v != nullptr ? *v : none;
}

MemoryPlan must_plan(const ir::Graph& g, const PlanOptions& opt = {}) {
  auto p = plan(g, opt);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(test::replay(g, graph_order(g), *p), "");
  return p.is_ok() ? *p : MemoryPlan{};
}

TEST(Aliasing, ViewsShareTheirRootsBytesAndExtendItsLifetime) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {2, 64});
  ir::Value* shape = b.graph().add_initializer("shape", ir::Tensor::of<int64_t>({1}, {128}));
  ir::Value* a = b.op("Transpose", {x}, "a", {64, 2});
  ir::Value* r = b.op("Reshape", {a, shape}, "r", {128});
  ir::Value* f = b.op("Flatten", {r}, "f", {1, 128});
  ir::Value* u = b.op("Unsqueeze", {f}, "u", {1, 1, 128});
  ir::Value* s = b.op("Squeeze", {u}, "s", {1, 128});
  ir::Value* i = b.op("Identity", {s}, "i", {1, 128});
  ir::Value* d = b.op("Dropout", {i}, "d", {1, 128});
  ir::Value* y = b.op("Transpose", {d}, "y", {128, 1});
  b.output(y);
  (void)u;
  MemoryPlan p = must_plan(b.graph());
  EXPECT_EQ(get(p, "r").alias_of, "a");
  EXPECT_EQ(get(p, "r").alias_kind, "view");
  EXPECT_EQ(get(p, "f").alias_of, "r");
  EXPECT_EQ(get(p, "s").alias_of, "u");
  EXPECT_EQ(get(p, "d").alias_of, "i");
  for (const auto& v : p.values) EXPECT_EQ(v.offset, get(p, "a").offset) << v.name;
  EXPECT_EQ(get(p, "a").first_step, 0);
  EXPECT_EQ(get(p, "a").last_step, 7);  // the root lives until the last view is read
  EXPECT_EQ(get(p, "r").first_step, 1);
  EXPECT_EQ(get(p, "r").last_step, 2);
  EXPECT_EQ(p.arena_bytes, 512u);
  EXPECT_EQ(p.lower_bound, 512u);
  EXPECT_EQ(p.naive_bytes, 7 * 512u);
  (void)x;
  (void)r;
  (void)f;
  (void)s;
  (void)i;
  (void)d;
}

TEST(Aliasing, TrainingDropoutIsNotAView) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 64});
  ir::Value* a = b.op("Relu", {x}, "a", {1, 64});
  ir::Value* ratio = b.graph().add_initializer("ratio", ir::Tensor::of<float>({}, {0.5f}));
  ir::Value* on = b.graph().add_initializer("on", ir::Tensor::of<bool>({}, {true}));
  ir::Value* off = b.graph().add_initializer("off", ir::Tensor::of<bool>({}, {false}));
  ir::Value* mode = b.input("mode", {}, ir::DType::kBool);
  ir::Value* d1 = b.op("Dropout", {a, ratio, on}, "d1", {1, 64});
  ir::Value* d2 = b.op("Dropout", {a, ratio, off}, "d2", {1, 64});
  ir::Value* d3 = b.op("Dropout", {a, ratio, mode}, "d3", {1, 64});
  ir::Value* y = b.op("Sum", {d1, d2, d3}, "y", {1, 64});
  b.output(y);
  MemoryPlan p = must_plan(b.graph());
  EXPECT_EQ(get(p, "d1").alias_of, "");
  EXPECT_EQ(get(p, "d2").alias_of, "a");
  EXPECT_EQ(get(p, "d3").alias_of, "");
}

TEST(Aliasing, ViewsOfGraphInputsOnlyWhenInputsLiveInTheArena) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 64});
  ir::Value* v = b.op("Identity", {x}, "v", {1, 64});
  ir::Value* y = b.op("Transpose", {v}, "y", {64, 1});
  ir::Value* z = b.op("Identity", {y}, "z", {64, 1});  // a view that is a graph output
  b.output(z);
  MemoryPlan outside = must_plan(b.graph());
  EXPECT_EQ(get(outside, "v").alias_of, "");  // x is the caller's buffer: v gets its own bytes
  EXPECT_EQ(outside.find("z"), nullptr);
  PlanOptions io;
  io.io_in_arena = true;
  MemoryPlan inside = must_plan(b.graph(), io);
  EXPECT_EQ(get(inside, "v").alias_of, "x");
  EXPECT_EQ(get(inside, "z").alias_of, "y");
  EXPECT_EQ(get(inside, "y").last_step, 2);
  (void)y;
}

TEST(Aliasing, InPlaceOnlyWhereTheInputDies) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 64});
  ir::Value* a = b.op("Neg", {x}, "a", {1, 64});
  ir::Value* r = b.op("Relu", {a}, "r", {1, 64});    // a is read again below: no in-place
  ir::Value* s = b.op("Add", {r, a}, "s", {1, 64});  // both die here: reuse the first (r)
  ir::Value* y = b.op("Sigmoid", {s}, "y", {1, 64});
  b.output(y);
  MemoryPlan p = must_plan(b.graph());
  EXPECT_EQ(get(p, "a").alias_of, "");  // x is a graph input: never overwritten
  EXPECT_EQ(get(p, "r").alias_of, "");
  EXPECT_EQ(get(p, "s").alias_of, "r");
  EXPECT_EQ(get(p, "s").alias_kind, "in-place");
  EXPECT_EQ(p.arena_bytes, 512u);
  PlanOptions no;
  no.in_place = false;
  EXPECT_EQ(must_plan(b.graph(), no).arena_bytes, 768u);
}

TEST(Aliasing, NoInPlaceOverGraphInputsOrOutputs) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 64});
  ir::Value* a = b.op("Neg", {x}, "a", {1, 64});
  ir::Value* r = b.op("Relu", {a}, "r", {1, 64});
  b.output(a);  // a must survive to the end although Relu is its last reader
  b.output(r);
  PlanOptions io;
  io.io_in_arena = true;
  MemoryPlan p = must_plan(b.graph(), io);
  EXPECT_EQ(get(p, "a").alias_of, "");
  EXPECT_EQ(get(p, "r").alias_of, "");
  EXPECT_NE(get(p, "a").offset, get(p, "r").offset);
}

TEST(Aliasing, NoInPlaceOverABroadcastInputOrADifferentElementSize) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {4, 64});
  ir::Value* row = b.op("ReduceMean", {x}, "row", {1, 64});
  ir::Value* full = b.op("Neg", {x}, "full", {4, 64});
  ir::Value* s = b.op("Add", {row, full}, "s", {4, 64});  // row broadcasts: reuse full, not row
  ir::Value* d = b.op("Cast", {s}, "d", {4, 64}, "", ir::DType::kDouble);  // 8-byte elements
  ir::Value* i = b.op("Cast", {d}, "i", {4, 64}, "", ir::DType::kInt64);   // same element size
  b.output(i);
  MemoryPlan p = must_plan(b.graph());
  EXPECT_EQ(get(p, "s").alias_of, "full");
  EXPECT_EQ(get(p, "d").alias_of, "");
  EXPECT_EQ(p.find("i"), nullptr);  // a graph output, outside the arena
  PlanOptions io;
  io.io_in_arena = true;
  MemoryPlan q = must_plan(b.graph(), io);
  EXPECT_EQ(get(q, "i").alias_of, "d");
  (void)row;
  (void)s;
  (void)d;
}

TEST(Aliasing, MicrosoftFusedElementwiseOpsRunInPlace) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {2, 64});
  ir::Value* bias = b.weight("bias", {64});
  ir::Value* a = b.op("Neg", {x}, "a", {2, 64});
  ir::Value* g = b.op("BiasGelu", {a, bias}, "g", {2, 64}, "com.microsoft");
  ir::Value* f = b.op("FastGelu", {g}, "f", {2, 64}, "com.microsoft");
  ir::Value* n = b.op("SkipLayerNormalization", {f}, "n", {2, 64}, "com.microsoft");  // row-wise
  ir::Value* y = b.op("Neg", {n}, "y", {2, 64});
  b.output(y);
  MemoryPlan p = must_plan(b.graph());
  EXPECT_EQ(get(p, "g").alias_of, "a");
  EXPECT_EQ(get(p, "f").alias_of, "g");
  EXPECT_EQ(get(p, "n").alias_of, "");
}

TEST(Aliasing, InferenceBatchNormRunsInPlaceOverX) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Value* c = b.op("Neg", {x}, "c", {1, 4, 8, 8});
  ir::Value* scale = b.weight("scale", {4});
  ir::Value* bias = b.weight("bias", {4});
  ir::Value* mean = b.weight("mean", {4});
  ir::Value* var = b.weight("var", {4});
  ir::Value* bn = b.op("BatchNormalization", {c, scale, bias, mean, var}, "bn", {1, 4, 8, 8});
  ir::Value* y = b.op("Relu", {bn}, "y", {1, 4, 8, 8});
  b.output(y);
  MemoryPlan p = must_plan(b.graph());
  EXPECT_EQ(get(p, "bn").alias_of, "c");
  EXPECT_EQ(get(p, "bn").alias_kind, "in-place");
  // Training mode writes running statistics: not in place.
  b.graph().find_node("bn_node")->set_attr("training_mode", int64_t{1});
  EXPECT_EQ(get(must_plan(b.graph()), "bn").alias_of, "");
}

TEST(Aliasing, FusedConvWritesOverItsResidualButNeverOverX) {
  // A ResNet block: the shortcut z dies at the FusedConv that adds it, so y takes z's bytes.
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 4, 8, 8});
  ir::Value* w = b.weight("w", {4, 4, 1, 1});
  ir::Value* bias = b.weight("b", {4});
  ir::Value* z = b.op("Neg", {x}, "z", {1, 4, 8, 8});
  ir::Value* a = b.op("Relu", {z}, "a", {1, 4, 8, 8});
  ir::Value* y = b.op("FusedConv", {a, w, bias, z}, "y", {1, 4, 8, 8}, "com.microsoft");
  ir::Value* out = b.op("Neg", {y}, "out", {1, 4, 8, 8});
  b.output(out);
  MemoryPlan p = must_plan(b.graph());
  EXPECT_EQ(get(p, "y").alias_of, "z");
  EXPECT_EQ(get(p, "y").alias_kind, "in-place");
  EXPECT_EQ(p.arena_bytes, 2 * 1024u);  // z|y and a

  // The convolution reads all of X for every output element: X in Y's bytes is never allowed,
  // not even when X is also the residual and dies there.
  GraphBuilder c;
  ir::Value* cx = c.input("x", {1, 4, 8, 8});
  ir::Value* cz = c.op("Neg", {cx}, "z", {1, 4, 8, 8});
  ir::Value* cy = c.op("FusedConv", {cz, c.weight("w", {4, 4, 1, 1}), c.weight("b", {4}), cz}, "y",
                       {1, 4, 8, 8}, "com.microsoft");
  c.output(c.op("Neg", {cy}, "out", {1, 4, 8, 8}));
  EXPECT_EQ(get(must_plan(c.graph()), "y").alias_of, "");
  (void)y;
}

TEST(Aliasing, OpFacts) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {4});
  b.op("Relu", {x}, "r", {4});
  EXPECT_TRUE(is_elementwise(*b.last()));
  EXPECT_EQ(view_op_source(*b.last(), 0), nullptr);
  b.op("Softmax", {x}, "s", {4});
  EXPECT_FALSE(is_elementwise(*b.last()));
  b.op("Relu", {x}, "c", {4}, "my.domain");
  EXPECT_FALSE(is_elementwise(*b.last()));
  b.op("Reshape", {x}, "v", {2, 2});
  EXPECT_EQ(view_op_source(*b.last(), 0), x);
}

}  // namespace
}  // namespace xopt::planner
