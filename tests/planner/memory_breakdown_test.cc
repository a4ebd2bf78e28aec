// The breakdown every printer renders (planner/memory_breakdown.h): the device buckets as the
// executor allocates them (with offload, only the resident weights on the device, the staging
// region beside them), the host bucket, the text and JSON forms, an old plan without the I/O
// bucket, and the shared-arena figures in the same shape with a group id that names no path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "planner/annotate.h"
#include "planner/lifetimes.h"
#include "planner/memory_breakdown.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "planner/shared_arena.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::chain;
constexpr size_t kMiB = size_t{1} << 20;

TEST(MemoryBreakdown, WithoutOffloadEveryParameterIsOnTheDeviceWithTheIoRegion) {
  auto c = chain({1024, 4096, 512, 1024});
  const MemoryBreakdown b = memory_breakdown(c->plan);
  EXPECT_EQ(b.parameters, parameter_bytes(c->b.graph()));
  EXPECT_EQ(b.parameters, 27 * kMiB);
  // x [1, 256] and y3 [1, 1024] floats: the graph input and output outside the arena.
  EXPECT_EQ(b.io, 256u * 4 + 1024u * 4);
  EXPECT_EQ(b.io, io_region_bytes(c->b.graph(), c->plan));
  EXPECT_EQ(b.activations, c->plan.arena_bytes);
  EXPECT_EQ(b.staging, 0u);
  EXPECT_EQ(b.offloaded, 0u);
  EXPECT_FALSE(b.has_offload);
  // What the offload planner counts as the device's bytes with nothing offloaded.
  EXPECT_EQ(b.device_total(), device_bytes_without_offload(c->b.graph(), c->plan));
  EXPECT_EQ(b.total(), b.device_total() + kCudaContextEstimate);
  EXPECT_EQ(b.total(), c->plan.breakdown.total());
}

// The case: under --mem-budget the breakdown counts the resident parameters and the
// staging region on the device, the offloaded weights on the host, and its device total is the
// schedule's (within the budget).
TEST(MemoryBreakdown, OffloadMovesWeightsToTheHostAndTheDeviceTotalIsTheSchedules) {
  auto c = chain({1024, 4096, 512, 1024});
  const ir::Graph& g = c->b.graph();
  OffloadOptions o;
  o.budget = device_bytes_without_offload(g, c->plan) - 9 * kMiB;
  auto sched = offload_plan(g, c->order, c->plan, o);
  ASSERT_TRUE(sched.is_ok()) << sched.status().message();
  ASSERT_FALSE(sched->weights.empty());
  const MemoryBreakdown b = memory_breakdown(c->plan, &*sched);
  EXPECT_TRUE(b.has_offload);
  EXPECT_EQ(b.parameters, sched->resident_parameters);
  EXPECT_LT(b.parameters, parameter_bytes(g));
  EXPECT_EQ(b.staging, sched->staging_bytes);
  EXPECT_EQ(b.offloaded, sched->offloaded_bytes);
  EXPECT_EQ(b.offloaded_weights, sched->weights.size());
  EXPECT_EQ(b.all_parameters(), parameter_bytes(g));
  EXPECT_EQ(b.budget, o.budget);
  EXPECT_EQ(b.device_total(), sched->device_total);
  EXPECT_LE(b.device_total(), o.budget);
  EXPECT_EQ(b.host_total(), sched->offloaded_bytes);

  // The text and JSON say the same.
  const std::string text = report_text(c->plan, &*sched);
  EXPECT_NE(text.find("parameters (resident)"), std::string::npos) << text;
  EXPECT_EQ(text.find(std::to_string(parameter_bytes(g)) + "  "), std::string::npos)
      << "every parameter counted on the device:\n"
      << text;
  EXPECT_NE(text.find(std::to_string(sched->device_total)), std::string::npos) << text;
  EXPECT_NE(text.find("within the --mem-budget"), std::string::npos) << text;
  EXPECT_NE(text.find("host (pinned memory)"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(sched->offloaded_bytes)), std::string::npos) << text;
  auto j = nlohmann::json::parse(report_json(c->plan, &*sched));
  EXPECT_EQ(j["version"], 2);
  const auto& d = j["breakdown"]["device"];
  EXPECT_EQ(d["parameters"]["bytes"], sched->resident_parameters);
  EXPECT_EQ(d["staging"]["bytes"], sched->staging_bytes);
  EXPECT_EQ(d["total"]["bytes"], sched->device_total);
  EXPECT_EQ(d["total"]["bytes"], j["offload"]["device_total"]);
  EXPECT_EQ(d["total_with_context"]["bytes"], sched->device_total + kCudaContextEstimate);
  EXPECT_EQ(j["breakdown"]["host"]["offloaded_parameters"]["bytes"], sched->offloaded_bytes);
  EXPECT_EQ(j["breakdown"]["budget"]["bytes"], o.budget);
  EXPECT_TRUE(j["breakdown"]["budget"]["within"].get<bool>());
  EXPECT_EQ(j["breakdown"]["parameters"], parameter_bytes(g));
}

// A schedule that offloads nothing (everything fits): the budget is reported, no host bytes.
TEST(MemoryBreakdown, ABudgetThatFitsOffloadsNothing) {
  auto c = chain({256, 256});
  OffloadOptions o;
  o.budget = device_bytes_without_offload(c->b.graph(), c->plan);
  auto sched = offload_plan(c->b.graph(), c->order, c->plan, o);
  ASSERT_TRUE(sched.is_ok());
  ASSERT_TRUE(sched->weights.empty());
  const MemoryBreakdown b = memory_breakdown(c->plan, &*sched);
  EXPECT_EQ(b.device_total(), o.budget);
  EXPECT_EQ(b.parameters, parameter_bytes(c->b.graph()));
  EXPECT_EQ(b.offloaded, 0u);
  const std::string text = breakdown_text(b);
  EXPECT_EQ(text.find("parameters (resident)"), std::string::npos) << text;
  EXPECT_NE(text.find("within the --mem-budget"), std::string::npos) << text;
}

// A plan stored before the breakdown had its "io" field: read_plan takes it from the graph.
TEST(MemoryBreakdown, APlanStoredWithoutTheIoBucketGetsItFromTheGraph) {
  auto c = chain({256, 512});
  const size_t io = c->plan.breakdown.io;
  ASSERT_GT(io, 0u);
  auto doc = nlohmann::json::parse(plan_to_json(c->plan));
  doc["breakdown"].erase("io");
  c->b.model().set_metadata(kPlanMetadataKey, doc.dump());
  auto back = read_plan(c->b.model());
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->breakdown.io, io);
  auto direct = plan_from_json(doc.dump());  // no graph at hand: the field's default
  ASSERT_TRUE(direct.is_ok());
  EXPECT_EQ(direct->breakdown.io, 0u);
}

TEST(MemoryBreakdown, FromAModelWithItsOffloadSchedule) {
  auto c = chain({1024, 4096, 512, 1024});
  ir::Model& m = c->b.model();
  write_plan(m, c->plan);
  auto none = memory_breakdown(m);
  ASSERT_TRUE(none.is_ok()) << none.status().message();
  EXPECT_FALSE(none->has_offload);
  OffloadOptions o;
  o.budget = device_bytes_without_offload(c->b.graph(), c->plan) - 9 * kMiB;
  auto sched = offload_plan(c->b.graph(), c->order, c->plan, o);
  ASSERT_TRUE(sched.is_ok());
  write_offload(m, *sched);
  auto with = memory_breakdown(m);
  ASSERT_TRUE(with.is_ok()) << with.status().message();
  EXPECT_EQ(with->device_total(), sched->device_total);
  EXPECT_EQ(with->offloaded, sched->offloaded_bytes);
}

// The group: every member's resident parameters, staging and I/O, the largest arena and
// workspace, one context; offloaded weights stay on the host.
TEST(SharedArenaBreakdown, GroupCountsEveryMembersOwnRegionsOnceEachAndOneArena) {
  auto a = chain({1024, 4096, 512, 1024});
  auto b = chain({256, 256});
  OffloadOptions o;
  o.budget = device_bytes_without_offload(a->b.graph(), a->plan) - 9 * kMiB;
  auto sched = offload_plan(a->b.graph(), a->order, a->plan, o);
  ASSERT_TRUE(sched.is_ok());
  auto group = share_arena({"models/a.onnx", "b"}, {&a->plan, &b->plan});
  ASSERT_TRUE(group.is_ok()) << group.status().message();
  const MemoryBreakdown ma = memory_breakdown(a->plan, &*sched), mb = memory_breakdown(b->plan);
  const SharedArenaFigures f = shared_arena_figures_of(*group, {ma, mb});
  EXPECT_EQ(f.shared.parameters, ma.parameters + mb.parameters);
  EXPECT_EQ(f.shared.staging, ma.staging);
  EXPECT_EQ(f.shared.io, ma.io + mb.io);
  EXPECT_EQ(f.shared.activations, std::max(a->plan.arena_bytes, b->plan.arena_bytes));
  EXPECT_EQ(f.shared.cuda_context, kCudaContextEstimate);
  EXPECT_EQ(f.shared.offloaded, sched->offloaded_bytes);
  EXPECT_EQ(f.shared_total, f.shared.total());
  EXPECT_EQ(f.separate_total, ma.total() + mb.total());
  EXPECT_EQ(f.separate.cuda_context, 2 * kCudaContextEstimate);
  EXPECT_LT(f.shared_total, f.separate_total);
  const std::string text = shared_arena_text(*group, f);
  EXPECT_NE(text.find("models/a.onnx"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(f.shared_total)), std::string::npos) << text;
  EXPECT_NE(text.find("host (pinned)"), std::string::npos) << text;
  auto j = nlohmann::json::parse(shared_arena_report_json(*group, f, {"a.opt.onnx", "b.opt.onnx"}));
  ASSERT_EQ(j["members"].size(), 2u);
  EXPECT_EQ(j["members"][0]["name"], "models/a.onnx");
  EXPECT_EQ(j["members"][0]["output"], "a.opt.onnx");
  EXPECT_EQ(j["members"][0]["breakdown"]["device"]["total"]["bytes"], sched->device_total);
  EXPECT_EQ(j["shared"]["breakdown"]["device"]["total"]["bytes"], f.shared.device_total());
  EXPECT_EQ(j["shared_total"], f.shared_total);
  EXPECT_EQ(j["group"]["members"][1], "b");
}

// The id names the plans, not the members: the same plans under other names (other paths, another
// working folder) form the same group; other plans another.
TEST(SharedArenaBreakdown, GroupIdDependsOnThePlansNotTheNames) {
  auto a = chain({1024, 512});
  auto b = chain({256, 256});
  auto here = share_arena({"a.onnx", "b.onnx"}, {&a->plan, &b->plan});
  auto there = share_arena({"../x/a.onnx", "/abs/b.onnx"}, {&a->plan, &b->plan});
  ASSERT_TRUE(here.is_ok() && there.is_ok());
  EXPECT_EQ(here->id, there->id);
  EXPECT_EQ(here->id.rfind("shared-", 0), 0u) << here->id;
  EXPECT_EQ(here->id.size(), 7u + 16u) << here->id;
  auto swapped = share_arena({"b.onnx", "a.onnx"}, {&b->plan, &a->plan});
  ASSERT_TRUE(swapped.is_ok());
  EXPECT_NE(swapped->id, here->id);
  auto c = chain({1024, 513});
  auto other = share_arena({"a.onnx", "b.onnx"}, {&c->plan, &b->plan});
  ASSERT_TRUE(other.is_ok());
  EXPECT_NE(other->id, here->id);
}

}  // namespace
}  // namespace xopt::planner
