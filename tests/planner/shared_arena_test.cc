// Several models in one arena: the group's figures follow the formula, its record round-trips in
// the model, and groups that cannot exist are refused.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "planner/planner.h"
#include "planner/shared_arena.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::GraphBuilder;

MemoryPlan plan_of(const std::vector<int64_t>& dims) {
  GraphBuilder b;
  ir::Value* x = b.input("x", dims);
  ir::Value* a = b.op("Neg", {x}, "a", dims);
  ir::Value* r = b.op("Exp", {a}, "r", dims);
  ir::Value* s = b.op("Add", {a, r}, "s", dims);
  b.output(b.op("Neg", {s}, "y", dims));
  auto p = plan(b.graph());
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  MemoryPlan out = p.is_ok() ? *p : MemoryPlan{};
  out.breakdown.parameters = 1000 * dims.back();  // distinct figures per member
  out.workspace_bytes = 512 * static_cast<size_t>(dims.front());
  out.breakdown.workspace = out.workspace_bytes;
  return out;
}

TEST(SharedArena, TotalIsSumOfParametersAndIoPlusLargestArenaWorkspaceAndOneContext) {
  const MemoryPlan a = plan_of({1, 64}), b = plan_of({4, 256}), c = plan_of({2, 1024});
  auto shared = share_arena({"a", "b", "c"}, {&a, &b, &c});
  ASSERT_TRUE(shared.is_ok()) << shared.status().message();
  EXPECT_EQ(shared->id, shared_arena_id({&a, &b, &c}));
  EXPECT_EQ(shared->members, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(shared->arena_bytes, std::max({a.arena_bytes, b.arena_bytes, c.arena_bytes}));
  EXPECT_EQ(shared->arena_bytes, c.arena_bytes);  // 2x1024 floats, a and r live together
  EXPECT_EQ(shared->workspace_bytes, 2048u);      // b's
  const SharedArenaFigures f = shared_arena_figures(*shared, {&a, &b, &c});
  EXPECT_EQ(f.parameters, a.breakdown.parameters + b.breakdown.parameters + c.breakdown.parameters);
  EXPECT_EQ(f.context, a.breakdown.cuda_context);
  // Each member keeps its own I/O region (graph input and output outside the arena).
  const size_t io = a.breakdown.io + b.breakdown.io + c.breakdown.io;
  EXPECT_EQ(io, 4u * (64 + 1024 + 2048) * 2);
  EXPECT_EQ(f.shared_total, f.parameters + io + c.arena_bytes + 2048u + a.breakdown.cuda_context);
  EXPECT_EQ(f.separate_total, a.breakdown.total() + b.breakdown.total() + c.breakdown.total());
  EXPECT_LT(f.shared_total, f.separate_total);
}

TEST(SharedArena, RecordRoundTripsInTheModel) {
  const MemoryPlan a = plan_of({1, 64}), b = plan_of({4, 256});
  auto shared = share_arena({"a", "b"}, {&a, &b});
  ASSERT_TRUE(shared.is_ok());
  ir::Model m;
  m.graph = std::make_unique<ir::Graph>();
  auto none = read_shared_arena(m);
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
  write_shared_arena(m, *shared);
  auto back = read_shared_arena(m);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->id, shared->id);
  EXPECT_EQ((*back)->arena_bytes, shared->arena_bytes);
  EXPECT_EQ((*back)->members, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ((*back)->member, "");  // the group's record names no member
  write_shared_arena(m, shared_arena_member(*shared, 1));
  auto own = read_shared_arena(m);
  ASSERT_TRUE(own.is_ok()) << own.status().message();
  EXPECT_EQ((*own)->member, "b");
  EXPECT_EQ((*own)->id, shared->id);
  std::string stranger = shared_arena_to_json(shared_arena_member(*shared, 0));
  stranger.replace(stranger.find("\"member\":\"a\""), 12, "\"member\":\"z\"");
  m.set_metadata(kSharedArenaMetadataKey, stranger);
  auto wrong = read_shared_arena(m);
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("'z' is not one of"), std::string::npos);
  m.set_metadata(kSharedArenaMetadataKey, R"({"format":"xopt.shared_arena","version":2})");
  auto future = read_shared_arena(m);
  ASSERT_FALSE(future.is_ok());
  EXPECT_NE(future.status().message().find("version 2"), std::string::npos);
}

TEST(SharedArena, RefusesGroupsThatCannotExist) {
  MemoryPlan a = plan_of({1, 64}), b = plan_of({4, 256});
  EXPECT_FALSE(share_arena({}, {}).is_ok());
  auto twice = share_arena({"a", "a"}, {&a, &b});
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("'a' is given twice"), std::string::npos);
  b.alignment = 64;
  auto align = share_arena({"a", "b"}, {&a, &b});
  ASSERT_FALSE(align.is_ok());
  EXPECT_NE(align.status().message().find("alignment 64"), std::string::npos);
}

}  // namespace
}  // namespace xopt::planner
