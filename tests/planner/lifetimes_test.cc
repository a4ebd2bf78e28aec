// Lifetimes on a node order: first write to last read, graph inputs/outputs per io_in_arena,
// initializers never in the arena, and clear errors for unknown sizes and bad orders.
#include <gtest/gtest.h>

#include "planner/lifetimes.h"
#include "planner/planner.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::GraphBuilder;

struct Chain {
  GraphBuilder b;
  ir::Value *x, *w, *a, *c, *d, *unused;
  Chain() {
    x = b.input("x", {1, 50});  // 200 bytes
    w = b.weight("w", {1, 50});
    a = b.op("Transpose", {x}, "a", {50, 1});
    c = b.op("Mul", {a, w}, "c", {50, 50});
    unused = b.op("Transpose", {a}, "unused", {1, 50});
    d = b.op("Sum", {c, a}, "d", {50, 50});
    b.output(d);
  }
};

TEST(Lifetimes, FromFirstWriteToLastRead) {
  Chain g;
  auto lt = compute_lifetimes(g.b.graph(), graph_order(g.b.graph()));
  ASSERT_TRUE(lt.is_ok()) << lt.status().message();
  ASSERT_EQ(lt->values.size(), 3u);  // a, c, unused: no inputs, outputs or initializers
  EXPECT_EQ(lt->find(g.x), nullptr);
  EXPECT_EQ(lt->find(g.w), nullptr);
  EXPECT_EQ(lt->find(g.d), nullptr);
  const Lifetime* a = lt->find(g.a);
  EXPECT_EQ(a->first, 0);
  EXPECT_EQ(a->last, 3);  // read by Mul (1), Transpose (2) and Sum (3)
  EXPECT_EQ(a->bytes, 200u);
  EXPECT_EQ(a->size, 256u);
  EXPECT_EQ(lt->find(g.c)->first, 1);
  EXPECT_EQ(lt->find(g.c)->last, 3);
  // Written and never read: live at its own step only.
  EXPECT_EQ(lt->find(g.unused)->first, 2);
  EXPECT_EQ(lt->find(g.unused)->last, 2);
}

TEST(Lifetimes, InputsAndOutputsInTheArena) {
  Chain g;
  auto lt = compute_lifetimes(g.b.graph(), graph_order(g.b.graph()), {64, true});
  ASSERT_TRUE(lt.is_ok());
  ASSERT_EQ(lt->values.size(), 5u);
  EXPECT_EQ(lt->values[0].value, g.x);  // inputs first
  EXPECT_EQ(lt->find(g.x)->first, -1);
  EXPECT_EQ(lt->find(g.x)->last, 0);
  EXPECT_EQ(lt->find(g.x)->size, 256u);  // 200 rounded up to 64
  EXPECT_EQ(lt->find(g.d)->first, 3);
  EXPECT_EQ(lt->find(g.d)->last, 3);
  EXPECT_EQ(lt->find(g.w), nullptr);  // a parameter, never in the arena
}

TEST(Lifetimes, GraphOutputReadByALaterNodeLivesToTheEnd) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {4});
  ir::Value* y = b.op("Relu", {x}, "y", {4});
  ir::Value* z = b.op("Neg", {y}, "z", {4});
  b.output(y);
  b.output(z);
  auto lt = compute_lifetimes(b.graph(), graph_order(b.graph()), {256, true});
  ASSERT_TRUE(lt.is_ok());
  EXPECT_EQ(lt->find(y)->last, 1);
  EXPECT_EQ(lt->find(x)->last, 0);
}

TEST(Lifetimes, RefusesAValueOfUnknownSizeAndNamesIt) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {1, 4});
  ir::Value* a = b.op("Relu", {x}, "a", {1, 4});
  ir::Value* h = b.op("Relu", {a}, "hidden", {1, 4});
  b.op("Relu", {h}, "y", {1, 4});
  b.output(b.graph().find_value("y"));
  h->set_shape(ir::Shape({ir::Dim::symbolic("batch"), ir::Dim(4)}));
  auto p = plan(b.graph());
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("'hidden'"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("[batch,4]"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("hidden_node"), std::string::npos) << p.status().message();
  // Unknown rank and an unsized element type are refused too.
  h->set_shape(ir::Shape());
  EXPECT_FALSE(plan(b.graph()).is_ok());
  h->set_shape(ir::Shape::of({1, 4}));
  h->set_dtype(ir::DType::kString);
  auto s = plan(b.graph());
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("string"), std::string::npos) << s.status().message();
  // Graph inputs of unknown size are only a problem when they live in the arena.
  h->set_dtype(ir::DType::kFloat);
  x->set_shape(ir::Shape({ir::Dim::symbolic("N"), ir::Dim(4)}));
  EXPECT_TRUE(plan(b.graph()).is_ok());
  PlanOptions io;
  io.io_in_arena = true;
  auto e = plan(b.graph(), io);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("'x'"), std::string::npos) << e.status().message();
}

TEST(Lifetimes, RefusesOrdersThatAreNotTopologicalOrComplete) {
  Chain g;
  auto order = graph_order(g.b.graph());
  std::swap(order[0], order[1]);  // Mul before the Transpose that writes its input
  auto bad = compute_lifetimes(g.b.graph(), order);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("c_node"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("'a'"), std::string::npos) << bad.status().message();

  order = graph_order(g.b.graph());
  order.pop_back();
  auto missing = compute_lifetimes(g.b.graph(), order);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("d_node"), std::string::npos);

  order = graph_order(g.b.graph());
  order[3] = order[2];
  auto twice = compute_lifetimes(g.b.graph(), order);
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("twice"), std::string::npos);
}

TEST(Lifetimes, PlanOptionsAreValidated) {
  Chain g;
  PlanOptions opt;
  opt.alignment = 100;
  EXPECT_FALSE(plan(g.b.graph(), opt).is_ok());
  opt.alignment = 256;
  opt.strategies = {"greedy-by-size", "first-fit-magic"};
  auto p = plan(g.b.graph(), opt);
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("first-fit-magic"), std::string::npos);
}

TEST(Lifetimes, UnnamedNodesAreKeyedByTheirFirstOutput) {
  GraphBuilder b;
  ir::Value* x = b.input("x", {4});
  ir::Value* y = b.op("Relu", {x}, "y", {4});
  b.last()->set_name("");
  b.output(y);
  auto p = plan(b.graph());
  ASSERT_TRUE(p.is_ok());
  ASSERT_EQ(p->node_order.size(), 1u);
  EXPECT_EQ(p->node_order[0], "@y");
  auto order = resolve_node_order(b.graph(), *p);
  ASSERT_TRUE(order.is_ok()) << order.status().message();
  EXPECT_EQ((*order)[0], b.last());
  MemoryPlan no_order = *p;
  no_order.node_order.clear();
  EXPECT_EQ(resolve_node_order(b.graph(), no_order)->size(), 1u);
  no_order.node_order = {"@nope"};
  auto bad = resolve_node_order(b.graph(), no_order);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'@nope'"), std::string::npos);
}

}  // namespace
}  // namespace xopt::planner
