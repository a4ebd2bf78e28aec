// The CUDA session on whole models: every shared model after fold,fuse,plan runs on the GPU inside
// exactly its plan, its outputs match the CPU executor (the twin, which always runs) and PyTorch's
// stored reference, the measured regions equal the plan to the byte, and running allocates nothing.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "executor/cpu/compare.h"
#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/session.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "passes/pass_manager.h"
#include "planner/lifetimes.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/test_util.h"

namespace xopt::cuda {
namespace {

namespace fs = std::filesystem;

struct Optimized {
  ir::Model model;
  planner::MemoryPlan plan;
  std::map<std::string, ir::Tensor> inputs;
  ir::Tensor reference;  // PyTorch's output_0.pb
};

Result<Optimized> optimize_shared(const std::string& name) {
  const std::string path = test::shared_model_path(name);
  XOPT_ASSIGN_OR_RETURN(ir::Model model, ir::load_model(path));
  ir::ShapeBindings batch_one;  // a leading symbolic dim (a stand-in exported elsewhere) is 1
  batch_one.batch = 1;
  XOPT_RETURN_IF_ERROR(ir::bind_input_shapes(*model.graph, batch_one));
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*model.graph));
  passes::PassManager pm;
  XOPT_RETURN_IF_ERROR(pm.add_pipeline("fold,fuse,plan"));
  passes::PassContext ctx{passes::PassOptions{}};
  ctx.mark_shapes_valid();
  XOPT_RETURN_IF_ERROR(pm.run(model, ctx));
  if (!ctx.plan_outcome()) return internal_error("no plan made");
  Optimized o{std::move(model), ctx.plan_outcome()->plan, {}, {}};
  const fs::path data = fs::path(path).parent_path() / "test_data_set_0";
  XOPT_ASSIGN_OR_RETURN(ir::Tensor in,
                        exec::conformance::read_tensor_file((data / "input_0.pb").string()));
  XOPT_ASSIGN_OR_RETURN(o.reference,
                        exec::conformance::read_tensor_file((data / "output_0.pb").string()));
  o.inputs[o.model.graph->runtime_inputs().at(0)->name()] = std::move(in);
  return o;
}

// max|a - b| / max|ref| (the figure printed; the assertion is test::output_difference's rule).
double relative_error(const ir::Tensor& a, const ir::Tensor& ref) {
  return exec::compare_tensors("output", a, ref, {1e-4, 1e-5}).max_rel;
}

TEST(CudaSession, SharedModelsMatchCpuAndReferenceInsideThePlan) {
  XOPT_REQUIRE_SHARED(shared);
  std::string why;
  const bool gpu = device_available(&why);
  if (!gpu) std::printf("GPU half skipped: %s (the CPU twin runs)\n", why.c_str());
  for (const std::string& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    auto o = optimize_shared(name);
    ASSERT_TRUE(o.is_ok()) << o.status().message();
    // The twin: the CPU executor inside the same plan states the expected answer.
    exec::RunOptions ro;
    ro.plan = &o->plan;
    auto cpu = exec::run_model(o->model, o->inputs, ro);
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
    const double cpu_vs_ref = relative_error((*cpu)[0], o->reference);
    EXPECT_EQ(test::output_difference((*cpu)[0], o->reference), "")
        << "CPU executor against PyTorch's output";
    if (!gpu) continue;

    auto s = Session::create(o->model, o->plan);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    auto out = (*s)->run(o->inputs);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    const double gpu_vs_cpu = relative_error((*out)[0], (*cpu)[0]);
    const double gpu_vs_ref = relative_error((*out)[0], o->reference);
    EXPECT_EQ(test::output_difference((*out)[0], (*cpu)[0]), "") << "GPU against the CPU";
    EXPECT_EQ(test::output_difference((*out)[0], o->reference), "") << "GPU against PyTorch";
    const Footprint& fp = (*s)->footprint();
    EXPECT_EQ(fp.parameters, planner::parameter_bytes(*o->model.graph, o->plan.alignment));
    EXPECT_EQ(fp.arena, o->plan.arena_bytes);
    EXPECT_EQ(fp.workspace, o->plan.workspace_bytes);
    std::printf(
        "%-20s gpu/cpu %.2e  gpu/ref %.2e  cpu/ref %.2e | params %zu  arena %zu (plan %zu)  "
        "workspace %zu (plan %zu)  io %zu | context %s at load, %s after warm-up (estimate %s) | "
        "%s\n",
        name.c_str(), gpu_vs_cpu, gpu_vs_ref, cpu_vs_ref, fp.parameters, fp.arena,
        o->plan.arena_bytes, fp.workspace, o->plan.workspace_bytes, fp.io,
        planner::human_bytes(fp.context).c_str(),
        planner::human_bytes(fp.context_after_warmup).c_str(),
        planner::human_bytes(planner::kCudaContextEstimate).c_str(), fp.device.summary().c_str());
  }
}

// Workspace in the arena, the way `xopt --device cuda` plans: the estimate first, then each node's
// need measured by compiling with a limit of its own, then the arena planned again with those
// sizes. The CPU twin runs the in-arena plan (its workspace values are only the GPU's).
TEST(CudaSession, WorkspaceInTheArenaMeasuredThenReplanned) {
  XOPT_REQUIRE_SHARED(shared);
  auto o = optimize_shared("resnet18");
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  planner::PlanOptions po;
  po.workspace_in_arena = true;
  auto estimated = planner::plan(*o->model.graph, po);
  ASSERT_TRUE(estimated.is_ok()) << estimated.status().message();
  EXPECT_EQ(estimated->workspace_bytes, 0u);
  exec::RunOptions ro;
  ro.plan = &*estimated;
  auto cpu = exec::run_model(o->model, o->inputs, ro);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  EXPECT_EQ(test::output_difference((*cpu)[0], o->reference), "");
  XOPT_REQUIRE_GPU();
  SessionOptions measure;
  measure.workspace_limit = size_t{64} << 20;
  auto m = Session::create(o->model, *estimated, measure);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  auto plan =
      planner::replan_with_workspace(*o->model.graph, *estimated, (*m)->footprint().node_workspace);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  m->reset();
  auto s = Session::create(o->model, *plan);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  auto out = (*s)->run(o->inputs);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(test::output_difference((*out)[0], (*cpu)[0]), "");
  EXPECT_EQ((*s)->footprint().workspace, 0u);
  EXPECT_EQ((*s)->footprint().arena, plan->arena_bytes);
  std::printf(
      "resnet18 workspace in the arena: arena %zu (separate plan: arena %zu + workspace %zu)\n",
      plan->arena_bytes, o->plan.arena_bytes, o->plan.workspace_bytes);
}

// 100 runs allocate no device memory: no cudaMalloc through our allocator, and the device's used
// memory is the same before and after (a library allocating behind our back would show there).
TEST(CudaSession, RunsAllocateNothing) {
  XOPT_REQUIRE_SHARED(shared);
  auto o = optimize_shared("resnet18");
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  XOPT_REQUIRE_GPU();
  auto s = Session::create(o->model, o->plan);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  auto first = (*s)->run(o->inputs);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  const size_t allocs = DeviceBuffer::allocations();
  auto used = Session::device_memory_used();
  ASSERT_TRUE(used.is_ok());
  for (int i = 0; i < 100; ++i) {
    auto out = (*s)->run(o->inputs);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    ASSERT_TRUE((*out)[0].same_contents((*first)[0])) << "run " << i << " differs from the first";
  }
  EXPECT_EQ(DeviceBuffer::allocations(), allocs);
  auto after = Session::device_memory_used();
  ASSERT_TRUE(after.is_ok());
  EXPECT_EQ(*after, *used) << "device memory changed across 100 runs";
  std::printf(
      "resnet18: 100 runs, %zu device allocations, device memory used %s before and %s "
      "after\n",
      DeviceBuffer::allocations() - allocs, planner::human_bytes(*used).c_str(),
      planner::human_bytes(*after).c_str());
}

// The graph replay and the direct replay of the launch list compute the same bits.
TEST(CudaSession, GraphReplayEqualsDirectLaunches) {
  XOPT_REQUIRE_SHARED(shared);
  auto o = optimize_shared("bert_mini");
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  XOPT_REQUIRE_GPU();
  SessionOptions direct;
  direct.use_graph = false;
  auto a = Session::create(o->model, o->plan);
  auto b = Session::create(o->model, o->plan, direct);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  auto ra = (*a)->run(o->inputs);
  auto rb = (*b)->run(o->inputs);
  ASSERT_TRUE(ra.is_ok() && rb.is_ok());
  for (size_t i = 0; i < ra->size(); ++i) EXPECT_TRUE((*ra)[i].same_contents((*rb)[i]));
}

// A plan whose workspace region is smaller than a node's least need is refused, naming the node.
// The twin: the planner itself sizes the region from the node's need (score matrices: a head of
// 144 is beyond the fused attention kernel, which needs none).
TEST(CudaSession, RefusesAWorkspaceTooSmallNamingTheNode) {
  auto m = ir::parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,16,576] q, float[2,16,576] k, float[2,16,576] v) => (float[2,16,576] y) {
      y = com.microsoft.MultiHeadAttention <num_heads = 4> (q, k, v)
    }
  )");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  ASSERT_TRUE(ir::infer_shapes(*m->graph).is_ok());
  auto plan = planner::plan(*m->graph);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  // Every score matrix, and Q, K, V and the output split into heads (batch 2).
  EXPECT_EQ(plan->workspace_bytes, size_t{2 * 4 * 16 * 16 * 4 + 4 * 2 * 16 * 576 * 4});
  planner::MemoryPlan small = *plan;
  small.workspace_bytes = 0;
  small.breakdown.workspace = 0;
  small.node_workspace.assign(small.node_workspace.size(), 0);
  XOPT_REQUIRE_GPU();
  auto s = Session::create(*m, small);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("MultiHeadAttention"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("workspace"), std::string::npos) << s.status().message();
  EXPECT_TRUE(Session::create(*m, *plan).is_ok());
}

// Inputs that disagree with the plan, and plans that lie, are refused with the name of what is
// wrong. The CPU twin refuses the same plan.
TEST(CudaSession, RefusesWrongInputsAndLyingPlans) {
  auto m = ir::parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y) {
      a = Relu(x)
      b = Sigmoid(a)
      y = Add(a, b)
    }
  )");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  ASSERT_TRUE(ir::infer_shapes(*m->graph).is_ok());
  auto plan = planner::plan(*m->graph);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  planner::MemoryPlan lying = *plan;
  ASSERT_FALSE(lying.values.empty());
  lying.values[0].bytes += 4;  // the value's real size is no longer what the plan says
  lying.values[0].size += 256;
  lying.arena_bytes += 256;
  const std::map<std::string, ir::Tensor> ok = {{"x", ir::Tensor(ir::DType::kFloat, {2, 8})}};
  exec::RunOptions ro;
  ro.plan = &lying;
  EXPECT_FALSE(exec::run_model(*m, ok, ro).is_ok()) << "the CPU twin accepts a lying plan";
  XOPT_REQUIRE_GPU();
  auto bad = Session::create(*m, lying);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find(lying.values[0].name), std::string::npos)
      << bad.status().message();
  auto s = Session::create(*m, *plan);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  auto wrong = (*s)->run({{"x", ir::Tensor(ir::DType::kFloat, {3, 8})}});
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("dim 0"), std::string::npos) << wrong.status().message();
  auto missing = (*s)->run({});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("'x'"), std::string::npos);
}

}  // namespace
}  // namespace xopt::cuda
