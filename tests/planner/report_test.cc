// Report text/JSON, plan JSON round trip and versions, and plan annotations in the model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/onnx_io.h"
#include "planner/annotate.h"
#include "planner/plan_text.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::GraphBuilder;

MemoryPlan small_plan(GraphBuilder& b) {
  ir::Value* x = b.input("x", {1, 3, 8, 8});
  ir::Value* w = b.weight("w", {4, 3, 3, 3});  // 432 bytes -> 512 aligned
  ir::Value* c = b.op("Conv", {x, w}, "c", {1, 4, 6, 6});
  ir::Value* r = b.op("Relu", {c}, "r", {1, 4, 6, 6});
  ir::Value* t = b.op("Transpose", {r}, "t", {6, 6, 4, 1});
  ir::Value* y = b.op("Neg", {t}, "y", {6, 6, 4, 1});
  b.output(y);
  auto p = plan(b.graph());
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return *p;
}

TEST(Report, TextHasTheFourBucketsAndTheQualityFigures) {
  GraphBuilder b;
  MemoryPlan p = small_plan(b);
  EXPECT_EQ(p.breakdown.parameters, 512u);
  EXPECT_EQ(p.breakdown.cuda_context, kCudaContextEstimate);
  EXPECT_TRUE(p.breakdown.cuda_context_estimated);
  EXPECT_EQ(p.breakdown.activations, p.arena_bytes);
  const std::string text = report_text(p);
  for (const char* s :
       {"CUDA context (estimate)", "parameters", "activations (arena)", "workspace",
        "inputs/outputs", "device total", "total", "lower bound", "naive", "arena / lower bound",
        "greedy-by-size", "best-fit-decreasing", "500.00 MiB"})
    EXPECT_NE(text.find(s), std::string::npos) << s << " missing from\n" << text;
  EXPECT_NE(text.find(std::to_string(p.breakdown.total())), std::string::npos);
}

TEST(Report, JsonCarriesTheSameFigures) {
  GraphBuilder b;
  MemoryPlan p = small_plan(b);
  auto j = nlohmann::json::parse(report_json(p));
  EXPECT_EQ(j["format"], "xopt.memory_report");
  // Version 2: the device buckets under "device", the host's under "host".
  EXPECT_EQ(j["version"], 2);
  const auto& d = j["breakdown"]["device"];
  EXPECT_EQ(d["activations"]["bytes"].get<size_t>(), p.arena_bytes);
  EXPECT_EQ(d["parameters"]["bytes"].get<size_t>(), 512u);
  EXPECT_TRUE(d["cuda_context"]["estimated"].get<bool>());
  // x [1,3,8,8] in, y [6,6,4,1] out: 768 and 576 bytes, each aligned to 256, outside the arena.
  EXPECT_EQ(d["io"]["bytes"].get<size_t>(), 768u + 768u);
  EXPECT_EQ(d["total"]["bytes"].get<size_t>(), 512u + p.arena_bytes + p.workspace_bytes + 1536u);
  EXPECT_EQ(d["total_with_context"]["bytes"].get<size_t>(), p.breakdown.total());
  EXPECT_EQ(j["breakdown"]["host"]["total"]["bytes"].get<size_t>(), 0u);
  EXPECT_FALSE(j.contains("offload"));
  EXPECT_EQ(j["planning"]["lower_bound"].get<size_t>(), p.lower_bound);
  EXPECT_DOUBLE_EQ(j["planning"]["arena_over_lower_bound"].get<double>(), p.ratio_to_lower_bound());
  EXPECT_EQ(j["strategies"].size(), p.strategies.size());
}

TEST(Report, HumanBytes) {
  EXPECT_EQ(human_bytes(100), "100 B");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(size_t{500} << 20), "500.00 MiB");
  EXPECT_EQ(human_bytes(size_t{3} << 30), "3.00 GiB");
}

TEST(PlanJson, RoundTripsEveryField) {
  GraphBuilder b;
  MemoryPlan p = small_plan(b);
  p.batch = 8;
  auto back = plan_from_json(plan_to_json(p));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(plan_to_json(*back), plan_to_json(p));
  EXPECT_EQ(plan_to_text(*back), plan_to_text(p));
  EXPECT_EQ(back->node_workspace, p.node_workspace);
  EXPECT_EQ(back->strategies.size(), p.strategies.size());
  EXPECT_EQ(back->find("r")->alias_kind, "in-place");
}

TEST(PlanJson, ReadsVersion1AndRefusesFutureVersions) {
  const std::string v1 = R"({"format":"xopt.memory_plan","version":1,"alignment":256,
    "arena_bytes":512,"values":[{"name":"a","offset":0,"size":256,"first":0,"last":1},
    {"name":"b","offset":0,"size":256,"first":1,"last":1,"alias_of":"a"}]})";
  auto p = plan_from_json(v1);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->version, 1);
  EXPECT_EQ(p->values[1].alias_of, "a");
  EXPECT_EQ(p->values[1].alias_kind, "");
  EXPECT_EQ(p->values[0].role, "activation");
  EXPECT_TRUE(p->strategies.empty());
  EXPECT_TRUE(check_plan(*p).is_ok());
  auto future = plan_from_json(R"({"format":"xopt.memory_plan","version":4,"alignment":256,
    "arena_bytes":0,"values":[]})");
  ASSERT_FALSE(future.is_ok());
  EXPECT_NE(future.status().message().find("version 4"), std::string::npos);
}

TEST(Annotate, PlanTravelsInTheModelMetadata) {
  GraphBuilder b;
  MemoryPlan p = small_plan(b);
  auto missing = read_plan(b.model());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("xopt.memory_plan"), std::string::npos);
  write_plan(b.model(), p);
  write_plan(b.model(), p);  // replaces, does not duplicate
  int entries = 0;
  for (const auto& prop : b.model().shell.metadata_props())
    entries += prop.key() == kPlanMetadataKey;
  EXPECT_EQ(entries, 1);
  // Through the ONNX proto, as a saved model would go.
  auto reloaded = ir::model_from_proto(ir::model_to_proto(b.model()));
  ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().message();
  auto back = read_plan(*reloaded);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(plan_to_json(*back), plan_to_json(p));
  auto order = resolve_node_order(*reloaded->graph, *back);
  ASSERT_TRUE(order.is_ok()) << order.status().message();
  EXPECT_EQ(order->size(), reloaded->graph->num_nodes());
  b.model().set_metadata(kPlanMetadataKey, "{not json");
  EXPECT_FALSE(read_plan(b.model()).is_ok());
}

}  // namespace
}  // namespace xopt::planner
