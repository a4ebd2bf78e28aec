// The executor runs the shared models inside the planner's own plans (views and in-place reuse on,
// offsets shared between values whose lifetimes do not overlap) and gets the outputs of simple mode
// bit for bit.
#include <gtest/gtest.h>

#include <filesystem>

#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "planner/planner.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/test_util.h"

namespace xopt::exec {
namespace {

namespace fs = std::filesystem;

TEST(PlannedArena, SharedModelsMatchSimpleMode) {
  XOPT_REQUIRE_SHARED(shared);
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    const std::string path = test::shared_model_path(name);
    auto model = ir::load_model(path);
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    auto in = conformance::read_tensor_file(
        (fs::path(path).parent_path() / "test_data_set_0" / "input_0.pb").string());
    ASSERT_TRUE(in.is_ok());
    ir::Graph& g = *model->graph;
    const std::string input = g.runtime_inputs().at(0)->name();
    ir::ShapeBindings bind;
    bind.input_shapes[input] = in->dims();
    ASSERT_TRUE(ir::bind_input_shapes(g, bind).is_ok());
    Status inferred = ir::infer_shapes(g);
    ASSERT_TRUE(inferred.is_ok()) << inferred.message();
    std::map<std::string, ir::Tensor> inputs = {{input, *in}};
    auto simple = run_model(*model, inputs);
    ASSERT_TRUE(simple.is_ok()) << simple.status().message();
    for (bool io : {false, true}) {
      planner::PlanOptions po;
      po.io_in_arena = io;
      auto plan = planner::plan(g, po);
      ASSERT_TRUE(plan.is_ok()) << plan.status().message();
      RunOptions ro;
      RunStats stats;
      ro.plan = &*plan;
      ro.stats = &stats;
      auto arena = run_model(*model, inputs, ro);
      ASSERT_TRUE(arena.is_ok()) << arena.status().message();
      EXPECT_EQ(test::outputs_difference(*arena, *simple, test::kBitwise), "")
          << "arena mode vs simple mode (io_in_arena=" << io << ")";
      EXPECT_EQ(stats.arena_bytes, plan->arena_bytes);
      std::cout << name << " io_in_arena=" << io << ": arena " << plan->arena_bytes
                << " bytes (lower bound " << plan->lower_bound << ", naive " << plan->naive_bytes
                << "), " << stats.outputs_copied_into_arena
                << " kernel outputs copied into their slot\n";
    }
  }
}

}  // namespace
}  // namespace xopt::exec
