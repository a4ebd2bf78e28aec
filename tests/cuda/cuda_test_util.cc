#include "tests/cuda/cuda_test_util.h"

#include <cstdio>

#include "tests/cuda/lowp_test_util.h"

#include "executor/cpu/session.h"
#include "executor/cuda/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/planner.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

namespace xopt::test {

bool gpu_present(std::string* why) {
  return cuda::device_available(why);
}

void expect_cuda_matches_cpu(ir::Model& model, const CudaCase& c) {
  ASSERT_FALSE(model.graph->inputs().empty() && model.graph->outputs().empty());
  const std::string first =
      model.graph->num_nodes() > 0 ? (*model.graph->nodes().begin())->describe() : "(no nodes)";
  Status st = ir::infer_shapes(*model.graph);
  ASSERT_TRUE(st.is_ok()) << first << ": " << st.message();
  planner::MemoryPlan plan;
  if (auto json = model.metadata("xopt.memory_plan")) {
    auto p = planner::plan_from_json(*json);
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    plan = std::move(p).value();
  } else {
    auto p = planner::plan(*model.graph);
    ASSERT_TRUE(p.is_ok()) << first << ": " << p.status().message();
    plan = std::move(p).value();
  }
  std::map<std::string, ir::Tensor> inputs = random_inputs_any_float(*model.graph, c.seed);
  for (const auto& [name, t] : c.inputs) inputs[name] = t;

  // The twin: the CPU reference states the expected answer, and the plan must hold on the CPU too.
  auto want = exec::run_model(model, inputs);
  ASSERT_TRUE(want.is_ok()) << first << ": CPU reference: " << want.status().message();
  exec::RunOptions in_plan;
  in_plan.plan = &plan;
  auto want_planned = exec::run_model(model, inputs, in_plan);
  ASSERT_TRUE(want_planned.is_ok())
      << first << ": CPU inside the plan: " << want_planned.status().message();

  std::string why;
  if (!cuda::device_available(&why)) GTEST_SKIP() << "GPU half skipped: " << why;
  cuda::SessionOptions options;
  options.compile.tf32 = c.tf32;
  options.use_graph = c.use_graph;
  auto session = cuda::Session::create(model, plan, options);
  ASSERT_TRUE(session.is_ok()) << first << ": " << session.status().message();
  auto got = (*session)->run(inputs);
  ASSERT_TRUE(got.is_ok()) << first << ": " << got.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    OutputTolerance tol;
    tol.rtol = c.rtol;
    tol.atol = c.atol;
    const std::string d =
        output_difference((*got)[i], (*want)[i], tol, model.graph->outputs()[i]->name());
    EXPECT_EQ(d, "") << first << " (GPU against the CPU executor)";
  }
}

void expect_cuda_matches_cpu_fp32_only(std::string_view model_text, const CudaCase& c,
                                       const char* why_fp32_only) {
  ASSERT_NE(why_fp32_only, nullptr);
  auto m = ir::parse_model_text(model_text);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  SCOPED_TRACE("float32");
  expect_cuda_matches_cpu(*m, c);
}

void expect_cuda_matches_cpu_all_types(std::string_view model_text, const CudaCase& c,
                                       const LowpCase& lc) {
  expect_cuda_matches_cpu_fp32_only(model_text, c, "");
  const std::string text16 = lowp_text(model_text, ir::DType::kFloat16);
  if (text16 == model_text) return;  // no float tensors
  // A case the rewrite cannot express runs in float32 only, and says so: a tensor the op computes
  // as float32 whatever its input (Cast to float, LayerNormalization's statistics).
  auto m16 = ir::parse_model_text(lowp_text_keeping_literals(model_text, ir::DType::kFloat16));
  if (m16.is_ok()) convert_float_initializers(*m16->graph, ir::DType::kFloat16);
  Status why = m16.is_ok() ? ir::infer_shapes(*m16->graph) : m16.status();
  if (!why.is_ok()) {
    std::printf("[ lowp     ] float32 only, not expressible in the half types: %s\n",
                why.message().substr(0, why.message().find('\n')).c_str());
    return;
  }
  for (const LowpType& t : {kFloat16Type, kBFloat16Type}) {
    SCOPED_TRACE(t.name);
    expect_cuda_lowp_matches_cpu(model_text, t, lc);
  }
}

// Every text case runs in float32, float16 and bfloat16 (tests/cuda/lowp_test_util.h).
void expect_cuda_matches_cpu(std::string_view model_text, const CudaCase& c) {
  LowpCase lc;
  lc.seed = c.seed;
  lc.inputs = c.inputs;
  expect_cuda_matches_cpu_all_types(model_text, c, lc);
}

}  // namespace xopt::test
