// The timeline SVG read back: one rectangle per planned value whose coordinates are the plan's
// steps and offsets through the geometry written on the <svg> element.
#include <cmath>
#include <cstdlib>

#include "planner/annotate.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "planner/shared_arena.h"
#include "tests/util/test_util.h"
#include "tests/viz/viz_test_util.h"
#include "viz/breakdown.h"
#include "viz/format.h"
#include "viz/report.h"
#include "viz/timeline.h"

namespace xopt {
namespace {

using test::Xml;

double num(xmlNodePtr n, const char* attr) {
  return std::strtod(Xml::attr(n, attr).c_str(), nullptr);
}

// Every planned value has exactly one rectangle, placed where the plan says.
void expect_rects_match_plan(const planner::MemoryPlan& plan, const std::string& svg) {
  Xml x(svg);
  ASSERT_TRUE(x.ok()) << "the timeline is not well-formed XML";
  auto root = x.select("/svg:svg");
  ASSERT_EQ(root.size(), 1u);
  const double x0 = num(root[0], "data-x0"), sw = num(root[0], "data-step-width");
  const double base = num(root[0], "data-y-base"), scale = num(root[0], "data-bytes-scale");
  ASSERT_GT(sw, 0);
  ASSERT_GT(scale, 0);
  auto rects = x.select("//svg:rect[contains(concat(' ', @class, ' '), ' value ')]");
  ASSERT_EQ(rects.size(), plan.values.size());
  for (xmlNodePtr r : rects) {
    const planner::PlannedValue* pv = plan.find(Xml::attr(r, "data-value"));
    ASSERT_NE(pv, nullptr) << Xml::attr(r, "data-value");
    // Read back from the geometry, rounded to whole steps and bytes.
    const double first = (num(r, "x") - x0) / sw - 1;
    const double last = first + num(r, "width") / sw - 1;
    const double offset = (base - num(r, "y") - num(r, "height")) / scale;
    const double size = num(r, "height") / scale;
    EXPECT_NEAR(first, pv->first_step, 1e-3) << pv->name;
    EXPECT_NEAR(last, pv->last_step, 1e-3) << pv->name;
    // Coordinates carry 4 decimals: a byte is exact to within 1e-4 / scale.
    const double tol = 2e-4 / scale + 1;
    EXPECT_NEAR(offset, static_cast<double>(pv->offset), tol) << pv->name;
    EXPECT_NEAR(size, static_cast<double>(pv->size), tol) << pv->name;
    EXPECT_EQ(Xml::attr(r, "data-offset"), std::to_string(pv->offset));
    const bool alias = Xml::attr(r, "class").find("alias") != std::string::npos;
    EXPECT_EQ(alias, !pv->alias_of.empty()) << pv->name;
    EXPECT_FALSE(x.select("//svg:rect[@id='" + Xml::attr(r, "id") + "']/svg:title").empty());
  }
  EXPECT_EQ(x.select("//svg:polyline[@class='live']").size(), 1u);
}

TEST(Timeline, HandMadePlanWithAnAlias) {
  planner::MemoryPlan plan;
  plan.node_order = {"a", "b", "c"};
  plan.arena_bytes = 2048;
  plan.lower_bound = 1536;
  plan.values = {{"x", 0, 1024, 1000, 0, 1, "", "", "activation"},
                 {"y", 1024, 512, 500, 1, 2, "", "", "activation"},
                 {"z", 0, 1024, 1000, 1, 1, "x", "view", "activation"},
                 {"w", 1024, 1024, 1024, 2, 2, "", "", "activation"}};
  plan.node_workspace = {0, 256, 0};
  expect_rects_match_plan(plan, viz::timeline_svg(plan, nullptr));
}

TEST(Timeline, Resnet18PlanReadBack) {
  const std::string path = test::shared_model_path("resnet18");
  if (path.empty()) return;
  test::Optimized opt = test::optimize(path, "fold,fuse,plan");
  ASSERT_TRUE(opt.plan.has_value());
  const std::string svg = viz::timeline_svg(*opt.plan, opt.model.graph.get());
  expect_rects_match_plan(*opt.plan, svg);
  // Tooltips name the producer and its readers.
  Xml x(svg);
  bool producer = false;
  for (xmlNodePtr t : x.select("//svg:rect/svg:title"))
    producer |= Xml::text(t).find("producer: /") != std::string::npos;
  EXPECT_TRUE(producer);
}

TEST(Timeline, BertMiniPlanReadBackWithAliases) {
  const std::string path = test::shared_model_path("bert_mini");
  if (path.empty()) return;
  test::Optimized opt = test::optimize(path, "fold,fuse,plan");
  ASSERT_TRUE(opt.plan.has_value());
  expect_rects_match_plan(*opt.plan, viz::timeline_svg(*opt.plan, opt.model.graph.get()));
}

TEST(Breakdown, OneBarOfFiveDeviceBucketsPerModelEstimateHatched) {
  planner::MemoryBreakdown b;
  b.cuda_context = 300 << 20;
  b.parameters = 40 << 20;
  b.activations = 10 << 20;
  b.workspace = 1 << 20;
  b.io = 2 << 20;
  planner::MemoryBreakdown measured = b;
  measured.cuda_context_estimated = false;
  Xml x(viz::breakdown_svg({{"a", b}, {"b", measured}}));
  ASSERT_TRUE(x.ok());
  auto buckets = x.select("//svg:rect[@class='bucket']");
  ASSERT_EQ(buckets.size(), 10u);  // context, parameters, arena, workspace, I/O; no offload
  EXPECT_EQ(Xml::attr(buckets[0], "fill"), "url(#bd-hatch)");
  EXPECT_NE(Xml::attr(buckets[5], "fill"), "url(#bd-hatch)");
  EXPECT_EQ(Xml::attr(buckets[1], "data-bytes"), std::to_string(40 << 20));
  EXPECT_EQ(Xml::attr(buckets[4], "data-bytes"), std::to_string(2 << 20));
  EXPECT_TRUE(x.select("//svg:rect[@data-bucket='host']").empty());
}

// The legend names the context's kinds the bars show: every bar estimated, no "measured" entry.
TEST(Breakdown, LegendNamesOnlyTheContextKindsShown) {
  planner::MemoryBreakdown estimated;
  estimated.cuda_context = 300 << 20;
  estimated.parameters = 40 << 20;
  planner::MemoryBreakdown measured = estimated;
  measured.cuda_context_estimated = false;
  auto legend = [](const std::vector<viz::BreakdownBar>& bars) {
    Xml x(viz::breakdown_svg(bars));
    std::string text;
    for (auto* n : x.select("//svg:text")) text += Xml::text(n) + "|";
    return text;
  };
  const std::string only_estimates = legend({{"a", estimated}, {"b", estimated}});
  EXPECT_NE(only_estimates.find("CUDA context (estimate)|"), std::string::npos) << only_estimates;
  EXPECT_EQ(only_estimates.find("(measured)"), std::string::npos) << only_estimates;
  const std::string only_measured = legend({{"a", measured}});
  EXPECT_NE(only_measured.find("CUDA context (measured)|"), std::string::npos) << only_measured;
  EXPECT_EQ(only_measured.find("(estimate)"), std::string::npos) << only_measured;
  const std::string both = legend({{"a", estimated}, {"b", measured}});
  EXPECT_NE(both.find("CUDA context (measured)|"), std::string::npos) << both;
  EXPECT_NE(both.find("CUDA context (estimate)|"), std::string::npos) << both;
}

// Parameter offload: the model's bar counts only the resident weights on the device, then the
// staging region, then (after a gap) the weights held in pinned host memory.
TEST(Breakdown, OffloadDrawsStagingAndHostSegments) {
  XOPT_REQUIRE_SHARED(shared);
  auto o = test::optimize(test::shared_model_path("resnet18"), "fold,fuse,plan");
  ASSERT_TRUE(o.plan.has_value());
  const ir::Graph& g = *o.model.graph;
  planner::OffloadOptions oo;
  oo.budget = planner::device_bytes_without_offload(g, *o.plan) - (size_t{16} << 20);
  auto order = planner::resolve_node_order(g, *o.plan);
  ASSERT_TRUE(order.is_ok());
  auto sched = planner::offload_plan(g, *order, *o.plan, oo);
  ASSERT_TRUE(sched.is_ok()) << sched.status().message();
  ASSERT_FALSE(sched->weights.empty());
  planner::write_offload(o.model, *sched);
  auto bar = viz::breakdown_bar(o.model, "resnet18");
  ASSERT_TRUE(bar.is_ok()) << bar.status().message();
  EXPECT_EQ(bar->breakdown.parameters, sched->resident_parameters);
  EXPECT_EQ(bar->breakdown.staging, sched->staging_bytes);
  EXPECT_EQ(bar->breakdown.offloaded, sched->offloaded_bytes);
  EXPECT_EQ(bar->breakdown.device_total(), sched->device_total);
  Xml x(viz::breakdown_svg({*bar}));
  ASSERT_TRUE(x.ok());
  auto staging = x.select("//svg:rect[@data-bucket='staging']");
  auto host = x.select("//svg:rect[@data-bucket='host']");
  ASSERT_EQ(staging.size(), 1u);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(Xml::attr(host[0], "data-bytes"), std::to_string(sched->offloaded_bytes));
  EXPECT_EQ(Xml::attr(host[0], "fill"), "url(#bd-host)");
}

// report.html's summary and breakdown under offload: the resident parameters, the staging, the
// device total within the budget and the host bucket, never every parameter on the device.
TEST(Breakdown, ReportPageShowsTheDeviceTotalAndTheHostBucket) {
  XOPT_REQUIRE_SHARED(shared);
  auto o = test::optimize(test::shared_model_path("resnet18"), "fold,fuse,plan");
  ASSERT_TRUE(o.plan.has_value());
  const ir::Graph& g = *o.model.graph;
  planner::OffloadOptions oo;
  oo.budget = planner::device_bytes_without_offload(g, *o.plan) - (size_t{16} << 20);
  auto order = planner::resolve_node_order(g, *o.plan);
  ASSERT_TRUE(order.is_ok());
  auto sched = planner::offload_plan(g, *order, *o.plan, oo);
  ASSERT_TRUE(sched.is_ok()) << sched.status().message();
  planner::write_offload(o.model, *sched);
  viz::ReportInputs in;
  in.title = "resnet18";
  in.after = o.model.graph.get();
  in.plan = &*o.plan;
  in.model = &o.model;
  auto page = viz::report_html(in);
  ASSERT_TRUE(page.is_ok()) << page.status().message();
  const planner::MemoryBreakdown b = planner::memory_breakdown(*o.plan, &*sched);
  for (const std::string& s :
       {std::string("parameters (resident on the device)</td><td>") +
            viz::compact_bytes(b.parameters),
        std::string("offload staging</td><td>") + viz::compact_bytes(sched->staging_bytes),
        std::string("device total</td><td>") + viz::compact_bytes(sched->device_total) +
            " (within the --mem-budget",
        std::string("host: offloaded parameters (pinned)</td><td>") +
            viz::compact_bytes(sched->offloaded_bytes),
        std::string("data-bucket=\"host\" data-bytes=\"") + std::to_string(sched->offloaded_bytes)})
    EXPECT_NE(page->find(s), std::string::npos) << s;
}

// Models that share one arena: a bar of the members summed and a bar of the group, whose total is
// the shared-arena formula.
TEST(Breakdown, SharedArenaSeparateAndSharedBars) {
  planner::MemoryPlan a, b;
  auto set = [](planner::MemoryPlan& p, size_t params, size_t arena, size_t ws) {
    p.breakdown.cuda_context = 500;
    p.breakdown.parameters = params;
    p.breakdown.activations = arena;
    p.breakdown.workspace = ws;
  };
  set(a, 40, 10, 4);
  set(b, 7, 30, 1);
  a.arena_bytes = 10;
  a.workspace_bytes = 4;
  b.arena_bytes = 30;
  b.workspace_bytes = 1;
  auto group = planner::share_arena({"a", "b"}, {&a, &b});
  ASSERT_TRUE(group.is_ok());
  const auto bars = viz::shared_arena_bars(*group, {&a, &b});
  ASSERT_EQ(bars.size(), 2u);
  EXPECT_EQ(bars[0].breakdown.total(), size_t{500 + 40 + 10 + 4 + 500 + 7 + 30 + 1});
  EXPECT_EQ(bars[1].breakdown.total(), size_t{500 + 47 + 30 + 4});
  EXPECT_EQ(bars[0].breakdown.cuda_context, 1000u);
  EXPECT_EQ(bars[1].breakdown.cuda_context, 500u);
  EXPECT_EQ(bars[1].breakdown.total(),
            planner::shared_arena_figures(*group, {&a, &b}).shared_total);
}

// A batch sweep: one bar per batch, the arena growing with it, the stored plan's measured context
// carried to every bar.
TEST(Breakdown, BatchSweepPlansAgainAtEachBatch) {
  XOPT_REQUIRE_SHARED(shared);
  auto o = test::optimize(test::shared_model_path("resnet18"), "fold,fuse,plan");
  ASSERT_TRUE(o.plan.has_value());
  planner::MemoryPlan measured = *o.plan;
  measured.breakdown.cuda_context = 537 << 20;
  measured.breakdown.cuda_context_estimated = false;
  measured.breakdown.device = "NVIDIA H200 (sm_90)";
  planner::write_plan(o.model, measured);
  auto bars = viz::breakdown_sweep(o.model, "resnet18", {1, 8});
  ASSERT_TRUE(bars.is_ok()) << bars.status().message();
  ASSERT_EQ(bars->size(), 2u);
  EXPECT_EQ((*bars)[0].label, "resnet18 (batch 1)");
  EXPECT_EQ((*bars)[0].breakdown.activations, o.plan->arena_bytes);
  EXPECT_GT((*bars)[1].breakdown.activations, 7 * (*bars)[0].breakdown.activations);
  for (const auto& b : *bars) {
    EXPECT_EQ(b.breakdown.cuda_context, size_t{537} << 20);
    EXPECT_FALSE(b.breakdown.cuda_context_estimated);
    EXPECT_EQ(b.breakdown.parameters, o.plan->breakdown.parameters);
  }
}

}  // namespace
}  // namespace xopt
