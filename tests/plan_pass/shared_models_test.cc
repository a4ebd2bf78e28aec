// fold,fuse,plan on every shared model: the arena against its lower bound and against one buffer
// per value, reorder never growing the arena, and the CPU executor running each optimized model
// inside the plan read back from the saved model, with outputs identical to the plain run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>

#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "passes/pass_manager.h"
#include "planner/annotate.h"
#include "planner/lifetimes.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/test_util.h"

namespace xopt::passes {
namespace {

namespace fs = std::filesystem;

struct Planned {
  ir::Model model;
  planner::MemoryPlan plan;
  double seconds = 0;
};

Result<Planned> optimize(const std::string& path, const std::string& pipeline) {
  XOPT_ASSIGN_OR_RETURN(ir::Model model, ir::load_model(path));
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*model.graph));
  PassOptions options;
  XOPT_ASSIGN_OR_RETURN(options.input_naive_bytes, planner::naive_bytes(*model.graph));
  PassManagerOptions pmo;
  pmo.verify_each = true;
  PassManager pm(pmo);
  XOPT_RETURN_IF_ERROR(pm.add_pipeline(pipeline));
  PassContext ctx(std::move(options));
  ctx.mark_shapes_valid();
  XOPT_RETURN_IF_ERROR(pm.run(model, ctx));
  if (!ctx.plan_outcome()) return internal_error("no plan made");
  planner::MemoryPlan plan = ctx.plan_outcome()->plan;
  double seconds = ctx.plan_outcome()->seconds;
  return Planned{std::move(model), std::move(plan), seconds};
}

TEST(PlanSharedModels, ArenaNearLowerBoundFarBelowNaiveAndRunsInPlace) {
  XOPT_REQUIRE_SHARED(shared);
  const std::set<std::string> cnns = {"resnet18", "mobilenet_v2", "shufflenet_v2_x1_0",
                                      "squeezenet1_1"};
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    const std::string path = test::shared_model_path(name);
    auto with = optimize(path, "fold,fuse,plan");
    ASSERT_TRUE(with.is_ok()) << with.status().message();
    auto without = optimize(path, "fold,fuse,plan-memory");
    ASSERT_TRUE(without.is_ok()) << without.status().message();
    const planner::MemoryPlan& p = with->plan;
    auto over_arena = [&](size_t bytes) {
      return static_cast<double>(bytes) / static_cast<double>(std::max<size_t>(p.arena_bytes, 1));
    };
    std::printf(
        "%-20s arena %10zu  lower bound %10zu  ratio %.4f  naive as given %11zu (%.2fx)  "
        "naive fused %11zu (%.2fx)  no-reorder arena %10zu  workspace %9zu  %s  planned in "
        "%.3f ms\n",
        name.c_str(), p.arena_bytes, p.lower_bound, p.ratio_to_lower_bound(), p.input_naive_bytes,
        over_arena(p.input_naive_bytes), p.naive_bytes, over_arena(p.naive_bytes),
        without->plan.arena_bytes, p.workspace_bytes, p.strategy.c_str(), with->seconds * 1e3);
    EXPECT_LE(p.ratio_to_lower_bound(), 1.02);
    // DESIGN.md: activation memory >= 5x below one buffer per tensor on CNNs. The baseline is the
    // model as the user gives it: fusion is part of what the planner's pipeline saves. Against the
    // fused graph's own naive figure 5x cannot hold on resnet18 (see planner/README.md): its
    // arena equals the lower bound, the first Conv's output and the MaxPool's must coexist.
    if (cnns.count(name)) {
      EXPECT_GE(over_arena(p.input_naive_bytes), 5.0);
    }
    EXPECT_LE(p.arena_bytes, without->plan.arena_bytes) << "reorder grew the arena";

    // Save, read back, run in the stored plan; compare with the one-buffer-per-value run.
    const fs::path dir = fs::temp_directory_path() / ("xopt_plan_pass_" + name);
    fs::create_directories(dir);
    const std::string out = (dir / "model.opt.onnx").string();
    Status st = ir::save_model(with->model, out);
    ASSERT_TRUE(st.is_ok()) << st.message();
    auto saved = ir::load_model(out);
    ASSERT_TRUE(saved.is_ok()) << saved.status().message();
    auto stored = planner::read_plan(*saved);
    ASSERT_TRUE(stored.is_ok()) << stored.status().message();
    EXPECT_EQ(stored->arena_bytes, p.arena_bytes);

    const fs::path data = fs::path(path).parent_path() / "test_data_set_0";
    auto in = exec::conformance::read_tensor_file((data / "input_0.pb").string());
    ASSERT_TRUE(in.is_ok()) << in.status().message();
    std::map<std::string, ir::Tensor> inputs = {
        {saved->graph->runtime_inputs().at(0)->name(), *in}};
    auto simple = exec::run_model(*saved, inputs);
    ASSERT_TRUE(simple.is_ok()) << simple.status().message();
    exec::RunStats stats;
    exec::RunOptions ro;
    ro.plan = &*stored;
    ro.stats = &stats;
    auto arena = exec::run_model(*saved, inputs, ro);
    ASSERT_TRUE(arena.is_ok()) << arena.status().message();
    EXPECT_EQ(stats.arena_bytes, p.arena_bytes);
    EXPECT_EQ(test::outputs_difference(*arena, *simple, test::kBitwise), "")
        << "the stored plan vs one buffer per value";
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace xopt::passes
