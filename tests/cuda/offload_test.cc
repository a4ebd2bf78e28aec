// Parameter offload on the GPU: a model whose schedule keeps most weights in pinned host memory
// runs with its copies on a second stream, inside the budget, and gives the outputs of the CPU
// executor (the twin states them) and, bit for bit, those of the same model with every weight
// resident; a schedule that lies about the graph is refused at load.
#include <gtest/gtest.h>

#include <cstring>

#include "executor/cpu/session.h"
#include "executor/cuda/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

namespace xopt::cuda {
namespace {

// x[8,32] -> 8 x (MatMul with a 32x32 weight (4 KiB), Relu) -> y, the weights written out with
// small deterministic values so the chain stays in range.
std::string chain_text() {
  std::string body, inits;
  std::string x = "x";
  for (int i = 0; i < 8; ++i) {
    const std::string w = "w" + std::to_string(i), m = "m" + std::to_string(i),
                      r = i == 7 ? "y" : "r" + std::to_string(i);
    body += m + " = MatMul(" + x + ", " + w + ")  " + r + " = Relu(" + m + ")\n";
    inits += std::string(i ? ", " : "") + "float[32,32] " + w + " = {";
    for (int k = 0; k < 32 * 32; ++k)
      inits +=
          (k ? "," : "") + std::to_string(static_cast<float>((k * 7 + i * 13) % 17 - 8) / 16.f);
    inits += "}";
    x = r;
  }
  return R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[8,32] x) => (float[8,32] y) <)" +
         inits + "> {\n" + body + "}";
}

struct Offloaded {
  ir::Model model;
  planner::MemoryPlan plan;
  planner::OffloadPlan offload;
  std::map<std::string, ir::Tensor> inputs;
  std::vector<ir::Tensor> cpu;  // the expectation
};

Offloaded make() {
  Offloaded o;
  auto parsed = ir::parse_model_text(chain_text());
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  o.model = std::move(parsed).value();
  ir::Graph& g = *o.model.graph;
  EXPECT_TRUE(ir::infer_shapes(g).is_ok());
  o.plan = planner::plan(g).value();
  // Six of the eight 4 KiB weights must leave: the budget is the total less 24 KiB.
  planner::OffloadOptions oo;
  oo.min_weight_bytes = 1;
  oo.budget = planner::device_bytes_without_offload(g, o.plan) - 6 * 4096;
  auto order = planner::resolve_node_order(g, o.plan);
  EXPECT_TRUE(order.is_ok());
  auto sched = planner::offload_plan(g, *order, o.plan, oo);
  EXPECT_TRUE(sched.is_ok()) << sched.status().message();
  o.offload = *sched;
  planner::write_offload(o.model, o.offload);
  o.inputs = test::random_inputs(*o.model.graph);
  exec::RunOptions ro;
  ro.plan = &o.plan;
  auto out = exec::run_model(o.model, o.inputs, ro);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  o.cpu = *out;
  return o;
}

TEST(CudaOffload, RunsInsideTheBudgetAndMatchesTheResidentRun) {
  Offloaded o = make();
  // The CPU twin: the schedule offloads at least six weights and fits.
  ASSERT_GE(o.offload.weights.size(), 6u);
  ASSERT_LE(o.offload.device_total, o.offload.budget);
  ASSERT_EQ(o.cpu.size(), 1u);
  XOPT_REQUIRE_GPU();
  for (bool graph : {true, false}) {
    SessionOptions so;
    so.use_graph = graph;
    auto s = Session::create(o.model, o.plan, so);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    const Footprint& fp = (*s)->footprint();
    EXPECT_EQ(fp.offloaded_weights, o.offload.weights.size());
    EXPECT_EQ(fp.staging, o.offload.staging_bytes);
    EXPECT_EQ(fp.parameters, o.offload.resident_parameters);
    EXPECT_LE(fp.device_total(), o.offload.budget);
    SessionOptions all = so;
    all.ignore_offload = true;
    auto resident = Session::create(o.model, o.plan, all);
    ASSERT_TRUE(resident.is_ok()) << resident.status().message();
    EXPECT_EQ((*resident)->footprint().staging, 0u);
    auto want = (*resident)->run(o.inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    for (int round = 0; round < 3; ++round) {  // the staging bytes are reused every run
      auto got = (*s)->run(o.inputs);
      ASSERT_TRUE(got.is_ok()) << got.status().message();
      EXPECT_EQ(test::outputs_difference(*got, o.cpu), "") << "graph " << graph;
      ASSERT_EQ(got->size(), want->size());
      EXPECT_EQ(std::memcmp((*got)[0].raw_data(), (*want)[0].raw_data(), (*want)[0].nbytes()), 0)
          << "the offloaded run differs from the resident one";
    }
    auto prof = (*s)->profile(2);
    ASSERT_TRUE(prof.is_ok()) << prof.status().message();
  }
}

TEST(CudaOffload, RefusesAScheduleThatLiesAboutTheGraph) {
  Offloaded o = make();
  ASSERT_FALSE(o.offload.weights.empty());
  {
    planner::OffloadPlan lie = o.offload;
    lie.weights[0].last_use = lie.weights[0].first_use - 1 >= 0 ? lie.weights[0].first_use : 0;
    lie.weights[0].first_use = lie.weights[0].last_use;  // valid alone...
    lie.weights[0].name = "x";                           // ...but names no weight
    planner::write_offload(o.model, lie);
    XOPT_REQUIRE_GPU();
    auto s = Session::create(o.model, o.plan);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.status().message().find("'x'"), std::string::npos) << s.status().message();
  }
  {
    planner::OffloadPlan lie = o.offload;
    lie.steps += 1;  // for another plan
    planner::write_offload(o.model, lie);
    auto s = Session::create(o.model, o.plan);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.status().message().find("offload schedule"), std::string::npos)
        << s.status().message();
  }
}

}  // namespace
}  // namespace xopt::cuda
