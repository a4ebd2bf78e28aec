// Stored algorithm choices (SessionOptions::node_choices, kept in a model by
// `xopt --device cuda --tune`): a second load takes each still-valid choice without searching and
// computes the same bits; a choice that names no candidate here is ignored (chosen again). The CPU
// twin states the outputs.
#include <gtest/gtest.h>

#include <cstring>

#include "executor/cpu/session.h"
#include "executor/cuda/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/planner.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

namespace xopt::cuda {
namespace {

constexpr const char* kConvs = R"(<ir_version: 8, opset_import: ["" : 17]>
  g (float[2,8,16,16] x, float[16,8,3,3] w1, float[8,16,3,3] w2) => (float[2,8,16,16] y) {
    a = Conv <pads = [1,1,1,1]> (x, w1)
    r = Relu(a)
    y = Conv <pads = [1,1,1,1]> (r, w2)
  })";

TEST(CudaAlgorithmChoice, StoredChoicesAreTakenWithoutSearching) {
  auto parsed = ir::parse_model_text(kConvs);
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  ir::Model model = std::move(parsed).value();
  ASSERT_TRUE(ir::infer_shapes(*model.graph).is_ok());
  planner::MemoryPlan plan = planner::plan(*model.graph).value();
  const auto inputs = test::random_inputs(*model.graph);
  exec::RunOptions ro;
  ro.plan = &plan;
  auto cpu = exec::run_model(model, inputs, ro);  // the twin
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  XOPT_REQUIRE_GPU();
  SessionOptions tuned;
  tuned.compile.tune = true;
  tuned.workspace_limit = size_t{64} << 20;
  auto first = Session::create(model, plan, tuned);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  const Footprint& f1 = (*first)->footprint();
  ASSERT_EQ(f1.node_choice.size(), 2u) << "each Conv records its algorithm";
  EXPECT_EQ(f1.choices_reused, 0u);
  auto want = (*first)->run(inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  EXPECT_EQ(test::outputs_difference(*want, *cpu), "");

  SessionOptions again;
  again.workspace_limit = tuned.workspace_limit;
  again.node_choices = f1.node_choice;
  auto second = Session::create(model, plan, again);
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  const Footprint& f2 = (*second)->footprint();
  EXPECT_EQ(f2.choices_reused, 2u);
  EXPECT_EQ(f2.node_choice, f1.node_choice);
  EXPECT_EQ(f2.node_workspace, f1.node_workspace);
  auto got = (*second)->run(inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(std::memcmp((*got)[0].raw_data(), (*want)[0].raw_data(), (*want)[0].nbytes()), 0)
      << "the same algorithms give the same bits";

  SessionOptions bogus = again;
  for (auto& [node, choice] : bogus.node_choices) choice = "999:9";
  auto third = Session::create(model, plan, bogus);
  ASSERT_TRUE(third.is_ok()) << third.status().message();
  EXPECT_EQ((*third)->footprint().choices_reused, 0u);
  auto ok = (*third)->run(inputs);
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(test::outputs_difference(*ok, *cpu), "");
}

}  // namespace
}  // namespace xopt::cuda
