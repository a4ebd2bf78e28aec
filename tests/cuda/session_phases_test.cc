// Session::create's phases, one by one. The layout (executor/cuda/session_layout.h: which regions
// of which size a plan asks for, which slice each node is bound to) needs no device and is tested
// here on the CPU; the device phases (executor/cuda/session_phases.h) run one after another on the
// GPU, each checked against the layout, and the GPU half skips without a device.
#include <gtest/gtest.h>

#include <cstring>

#include "executor/cpu/session.h"
#include "executor/cuda/session_impl.h"
#include "executor/cuda/session_layout.h"
#include "executor/cuda/session_phases.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/intervals.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

namespace xopt::cuda {
namespace {

// x -> Relu -> MatMul(w) -> Add(b) -> y, with a 8x4 weight (128 bytes) and a bias (16 bytes).
constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,8] x) => (float[2,4] y)
    <float[8,4] w = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1, 1,1,0,0, 0,1,1,0, 0,0,1,1, 1,0,0,1},
     float[4] b = {0.5, -0.5, 1, -1}> {
    a = Relu(x)
    h = MatMul(a, w)
    y = Add(h, b)
  }
)";

struct Planned {
  ir::Model model;
  planner::MemoryPlan plan;
  std::vector<const ir::Node*> order;
};

Planned make(const char* text = kModel, const planner::PlanOptions& po = {}) {
  Planned p;
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  p.model = std::move(m).value();
  EXPECT_TRUE(ir::infer_shapes(*p.model.graph).is_ok());
  auto plan = planner::plan(*p.model.graph, po);
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  p.plan = std::move(plan).value();
  auto order = exec::execution_order(*p.model.graph, &p.plan);
  EXPECT_TRUE(order.is_ok()) << order.status().message();
  p.order = std::move(order).value();
  return p;
}

const ir::Value* value(const Planned& p, const std::string& name) {
  const ir::Value* v = p.model.graph->find_value(name);
  EXPECT_NE(v, nullptr) << name;
  return v;
}

// The regions a plan asks for: each weight aligned in the parameter region (graph order), the
// graph's input and output in the I/O region (the plan keeps them outside the arena), every other
// value at its plan offset in the arena.
TEST(CudaSessionLayout, RegionsOfAPlan) {
  Planned p = make();
  auto layout = lay_out_session(*p.model.graph, p.plan, p.order, std::nullopt);
  ASSERT_TRUE(layout.is_ok()) << layout.status().message();
  EXPECT_EQ(layout->parameter_bytes, 256u + 256u);  // 128 and 16 bytes, each aligned to 256
  EXPECT_EQ(layout->parameter_bytes, planner::parameter_bytes(*p.model.graph));
  EXPECT_EQ(layout->arena_bytes, p.plan.arena_bytes);
  EXPECT_EQ(layout->io_bytes, 256u + 256u);  // x (64 bytes) and y (32 bytes)
  EXPECT_EQ(layout->staging_bytes, 0u);
  EXPECT_EQ(layout->workspace_limit, p.plan.workspace_bytes);
  EXPECT_EQ(layout->slice(value(p, "w")),
            (Slice{Region::kParameters, 0, ir::DType::kFloat, {8, 4}}));
  EXPECT_EQ(layout->slice(value(p, "b")),
            (Slice{Region::kParameters, 256, ir::DType::kFloat, {4}}));
  EXPECT_EQ(layout->slice(value(p, "x")), (Slice{Region::kIo, 0, ir::DType::kFloat, {2, 8}}));
  EXPECT_EQ(layout->slice(value(p, "y")), (Slice{Region::kIo, 256, ir::DType::kFloat, {2, 4}}));
  for (const char* name : {"a", "h"}) {
    const planner::PlannedValue* pv = p.plan.find(name);
    ASSERT_NE(pv, nullptr) << name;
    EXPECT_EQ(layout->slice(value(p, name)),
              (Slice{Region::kArena, pv->offset, ir::DType::kFloat,
                     p.model.graph->find_value(name)->shape().static_dims()}))
        << name;
  }
  ASSERT_EQ(layout->parameters.size(), 2u);
  EXPECT_EQ(layout->parameters[0], value(p, "w"));
  ASSERT_EQ(layout->inputs.size(), 1u);
  EXPECT_EQ(layout->inputs[0], value(p, "x"));
  ASSERT_EQ(layout->outputs.size(), 1u);
  EXPECT_EQ(layout->outputs[0], value(p, "y"));

  // With inputs and outputs in the arena, the I/O region is empty.
  planner::PlanOptions in_arena;
  in_arena.io_in_arena = true;
  Planned q = make(kModel, in_arena);
  auto l2 = lay_out_session(*q.model.graph, q.plan, q.order, std::nullopt);
  ASSERT_TRUE(l2.is_ok()) << l2.status().message();
  EXPECT_EQ(l2->io_bytes, 0u);
  EXPECT_EQ(l2->slice(value(q, "x")).region, Region::kArena);
  ASSERT_NE(q.plan.find("y"), nullptr);
  EXPECT_EQ(l2->slice(value(q, "y")).offset, q.plan.find("y")->offset);
}

// Each node reads and writes exactly the slices of its values; its workspace is the region's.
TEST(CudaSessionLayout, EachNodeBoundToItsPlannedSlices) {
  Planned p = make();
  auto layout = lay_out_session(*p.model.graph, p.plan, p.order, std::nullopt);
  ASSERT_TRUE(layout.is_ok()) << layout.status().message();
  ASSERT_EQ(layout->nodes.size(), 3u);
  for (size_t s = 0; s < layout->nodes.size(); ++s) {
    const NodeBinding& b = layout->nodes[s];
    EXPECT_EQ(b.node, p.order[s]);
    ASSERT_EQ(b.inputs.size(), b.node->inputs().size());
    for (size_t i = 0; i < b.inputs.size(); ++i) {
      ASSERT_TRUE(b.inputs[i].has_value());
      EXPECT_EQ(*b.inputs[i], layout->slice(b.node->inputs()[i])) << b.node->describe();
    }
    ASSERT_EQ(b.outputs.size(), 1u);
    EXPECT_EQ(*b.outputs[0], layout->slice(b.node->outputs()[0]));
    EXPECT_FALSE(b.workspace_offset.has_value());
    EXPECT_EQ(b.workspace_limit, p.plan.workspace_bytes);
    EXPECT_FALSE(b.soft_limit);
  }
  // The MatMul reads the arena's `a` and the weight's parameter bytes, writes the arena's `h`.
  const NodeBinding& mm = layout->nodes[1];
  EXPECT_EQ(mm.node->op_type(), "MatMul");
  EXPECT_EQ(mm.inputs[0]->region, Region::kArena);
  EXPECT_EQ(mm.inputs[1]->region, Region::kParameters);
  EXPECT_EQ(mm.outputs[0]->offset, p.plan.find("h")->offset);

  // An omitted optional input has no slice.
  Planned clip = make(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x, float[1] hi) => (float[4] y) { y = Clip(x, , hi) }
  )");
  auto lc = lay_out_session(*clip.model.graph, clip.plan, clip.order, std::nullopt);
  ASSERT_TRUE(lc.is_ok()) << lc.status().message();
  ASSERT_EQ(lc->nodes[0].inputs.size(), 3u);
  EXPECT_TRUE(lc->nodes[0].inputs[0].has_value());
  EXPECT_FALSE(lc->nodes[0].inputs[1].has_value());
  EXPECT_EQ(*lc->nodes[0].inputs[2], lc->slice(value(clip, "hi")));
}

// Workspace: in the arena, each node gets its own planned bytes (a node with none gets a limit of
// 0); measuring, every node gets the session's limit, or its own per-node limit (soft).
TEST(CudaSessionLayout, WorkspacePlaceAndLimitPerNode) {
  Planned p = make();
  planner::MemoryPlan ws = p.plan;
  ws.workspace_in_arena = true;
  planner::PlannedValue own;
  own.name = planner::workspace_value_name(planner::node_key(*p.order[1]));
  own.role = "workspace";
  own.offset = ws.arena_bytes;
  own.size = own.bytes = 512;
  ws.values.push_back(own);
  ws.arena_bytes += 512;
  auto layout = lay_out_session(*p.model.graph, ws, p.order, std::nullopt);
  ASSERT_TRUE(layout.is_ok()) << layout.status().message();
  EXPECT_TRUE(layout->workspace_in_arena);
  EXPECT_FALSE(layout->nodes[0].workspace_offset.has_value());
  EXPECT_EQ(layout->nodes[0].workspace_limit, 0u);
  ASSERT_TRUE(layout->nodes[1].workspace_offset.has_value());
  EXPECT_EQ(*layout->nodes[1].workspace_offset, own.offset);
  EXPECT_EQ(layout->nodes[1].workspace_limit, 512u);

  LayoutOptions measuring;
  measuring.workspace_limit = 1 << 20;
  measuring.node_workspace_limit = {4096, 0};  // the third node has none: the session's limit
  auto m = lay_out_session(*p.model.graph, ws, p.order, std::nullopt, measuring);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_FALSE(m->workspace_in_arena);  // measuring uses the region
  EXPECT_EQ(m->workspace_limit, size_t{1} << 20);
  EXPECT_FALSE(m->nodes[1].workspace_offset.has_value());
  EXPECT_TRUE(m->nodes[0].soft_limit);
  EXPECT_EQ(m->nodes[0].workspace_limit, 4096u);
  EXPECT_EQ(m->nodes[1].workspace_limit, 0u);
  EXPECT_FALSE(m->nodes[2].soft_limit);
  EXPECT_EQ(m->nodes[2].workspace_limit, size_t{1} << 20);
}

// Plans that disagree with the graph are refused, naming what disagrees.
TEST(CudaSessionLayout, RefusesPlansThatLie) {
  Planned p = make();
  const ir::Graph& g = *p.model.graph;
  {
    planner::MemoryPlan lying = p.plan;
    planner::PlannedValue* a = nullptr;
    for (planner::PlannedValue& pv : lying.values)
      if (pv.name == "a") a = &pv;
    ASSERT_NE(a, nullptr);
    a->bytes += 4;
    auto l = lay_out_session(g, lying, p.order, std::nullopt);
    ASSERT_FALSE(l.is_ok());
    EXPECT_NE(l.status().message().find("value 'a' ("), std::string::npos) << l.status().message();
    EXPECT_NE(l.status().message().find("needs 64 bytes but the plan gives it 68"),
              std::string::npos)
        << l.status().message();
  }
  {
    planner::MemoryPlan lying = p.plan;
    lying.values.push_back(lying.values[0]);
    lying.values.back().name = "nowhere";
    auto l = lay_out_session(g, lying, p.order, std::nullopt);
    ASSERT_FALSE(l.is_ok());
    EXPECT_NE(l.status().message().find("'nowhere' is not in the graph"), std::string::npos)
        << l.status().message();
  }
  {
    planner::MemoryPlan lying = p.plan;
    lying.node_order.push_back("extra");
    auto l = lay_out_session(g, lying, p.order, std::nullopt);
    ASSERT_FALSE(l.is_ok());
    const std::string want =
        "orders " + std::to_string(lying.node_order.size()) + " nodes but the graph has 3";
    EXPECT_NE(l.status().message().find(want), std::string::npos) << l.status().message();
  }
  {
    // `h` read by the Add but placed nowhere.
    planner::MemoryPlan lying = p.plan;
    std::erase_if(lying.values, [](const planner::PlannedValue& pv) { return pv.name == "h"; });
    auto l = lay_out_session(g, lying, p.order, std::nullopt);
    ASSERT_FALSE(l.is_ok());
    EXPECT_NE(l.status().message().find("value 'h'"), std::string::npos) << l.status().message();
    EXPECT_NE(l.status().message().find("no place in the plan"), std::string::npos);
  }
}

// Offloaded weights live in staging at the schedule's offsets, their host bytes one after
// another; the parameter region holds only the resident ones. A schedule that lies is refused.
TEST(CudaSessionLayout, OffloadedWeightsInStaging) {
  Planned p = make();
  const ir::Graph& g = *p.model.graph;
  planner::OffloadPlan off;
  off.alignment = p.plan.alignment;
  off.steps = 3;
  off.staging_bytes = 256;
  off.offloaded_bytes = 256;
  planner::OffloadedWeight w;
  w.name = "w";
  w.bytes = 128;
  w.size = 256;
  w.offset = 0;
  w.prefetch_step = 0;
  w.first_use = w.last_use = 1;
  off.weights.push_back(w);
  auto layout = lay_out_session(g, p.plan, p.order, off);
  ASSERT_TRUE(layout.is_ok()) << layout.status().message();
  EXPECT_EQ(layout->parameter_bytes, 256u);  // the bias alone
  ASSERT_EQ(layout->parameters.size(), 1u);
  EXPECT_EQ(layout->parameters[0], value(p, "b"));
  EXPECT_EQ(layout->slice(value(p, "b")).offset, 0u);
  EXPECT_EQ(layout->staging_bytes, 256u);
  EXPECT_EQ(layout->offloaded_bytes, 256u);
  EXPECT_EQ(layout->slice(value(p, "w")), (Slice{Region::kStaging, 0, ir::DType::kFloat, {8, 4}}));
  ASSERT_EQ(layout->copies.size(), 1u);
  EXPECT_EQ(layout->copies[0].weight, value(p, "w"));
  EXPECT_EQ(layout->copies[0].bytes, 128u);
  EXPECT_EQ(layout->copies[0].first_use, 1);

  planner::OffloadPlan early = off;
  early.weights[0].first_use = early.weights[0].last_use = 0;  // the MatMul is step 1
  auto l = lay_out_session(g, p.plan, p.order, early);
  ASSERT_FALSE(l.is_ok());
  EXPECT_NE(l.status().message().find("'w' is read by"), std::string::npos) << l.status().message();
  planner::OffloadPlan other = off;
  other.steps = 4;
  EXPECT_FALSE(check_offload(other, g, p.order, p.plan).is_ok());
  planner::OffloadPlan size = off;
  size.weights[0].bytes = 64;
  auto ls = check_offload(size, g, p.order, p.plan);
  ASSERT_FALSE(ls.is_ok());
  EXPECT_NE(ls.message().find("not a weight of that size"), std::string::npos) << ls.message();
}

TEST(CudaSessionLayout, SharedArenaMustHoldThePlan) {
  Planned p = make();
  planner::SharedArena sh;
  sh.id = "a+b";
  sh.alignment = p.plan.alignment;
  sh.arena_bytes = p.plan.arena_bytes;
  sh.workspace_bytes = p.plan.workspace_bytes;
  EXPECT_TRUE(check_fits_shared_arena(p.plan, sh).is_ok());
  planner::SharedArena small = sh;
  small.arena_bytes = p.plan.arena_bytes - 1;
  Status st = check_fits_shared_arena(p.plan, small);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("shared arena 'a+b'"), std::string::npos) << st.message();
  planner::SharedArena other = sh;
  other.alignment = 512;
  EXPECT_FALSE(check_fits_shared_arena(p.plan, other).is_ok());
}

// The kernel lookup names the first node without one; a slice's address is its region's base
// plus its offset.
TEST(CudaSessionPhases, KernelsAndAddressesOnTheCpu) {
  Planned p = make();
  auto kernels = find_kernels(p.order);
  ASSERT_TRUE(kernels.is_ok()) << kernels.status().message();
  ASSERT_EQ(kernels->size(), 3u);
  EXPECT_EQ((*kernels)[1]->op_type, "MatMul");
  auto unknown = ir::parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 17, "ai.xopt.test" : 1]>
    g (float[4] x) => (float[4] y) { a = Relu(x)  y = ai.xopt.test.NoSuchOp(a) }
  )");
  ASSERT_TRUE(unknown.is_ok()) << unknown.status().message();
  std::vector<const ir::Node*> nodes;
  for (const ir::Node* n : unknown->graph->nodes()) nodes.push_back(n);
  auto none = find_kernels(nodes);
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().message().find("no CUDA kernel for ai.xopt.test.NoSuchOp"),
            std::string::npos)
      << none.status().message();

  alignas(256) static std::byte regions[4][1024];
  const RegionBases bases{regions[0], regions[1], regions[2], regions[3]};
  const DeviceTensor t = tensor_at({Region::kIo, 256, ir::DType::kFloat, {2, 4}}, bases);
  EXPECT_EQ(t.data, static_cast<void*>(regions[2] + 256));
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(t.nbytes(), 32u);
  EXPECT_EQ(tensor_at({Region::kStaging, 0, ir::DType::kFloat, {}}, bases).data,
            static_cast<void*>(regions[3]));
  EXPECT_EQ(tensor_at({Region::kParameters, 512, ir::DType::kFloat, {1}}, bases).data,
            static_cast<void*>(regions[0] + 512));
  EXPECT_EQ(tensor_at({Region::kArena, 8, ir::DType::kFloat, {1}}, bases).data,
            static_cast<void*>(regions[1] + 8));
}

// The device phases in turn, each checked against the layout; the session they build computes
// what the CPU executor does (the twin, which runs without a GPU too).
TEST(CudaSessionPhases, EachPhaseOnTheGpu) {
  Planned p = make();
  const std::map<std::string, ir::Tensor> inputs = test::random_inputs(*p.model.graph);
  exec::RunOptions ro;
  ro.plan = &p.plan;
  auto cpu = exec::run_model(p.model, inputs, ro);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto layout = lay_out_session(*p.model.graph, p.plan, p.order, std::nullopt);
  ASSERT_TRUE(layout.is_ok()) << layout.status().message();
  auto kernels = find_kernels(p.order);
  ASSERT_TRUE(kernels.is_ok()) << kernels.status().message();
  XOPT_REQUIRE_GPU();
  Session::Impl s;
  LoadState load;
  const SessionOptions options;

  ASSERT_TRUE(measure_context(s, options, load).is_ok());
  EXPECT_NE(s.stream, nullptr);
  EXPECT_NE(s.handles.cudnn, nullptr);
  EXPECT_FALSE(s.footprint.device.name.empty());
  EXPECT_GT(s.footprint.context, 0u);

  const size_t before = DeviceBuffer::allocations();
  ASSERT_TRUE(allocate_regions(s, *layout, options, load).is_ok());
  EXPECT_EQ(s.params.size(), layout->parameter_bytes);
  EXPECT_EQ(s.arena.size(), layout->arena_bytes);
  EXPECT_EQ(s.io.size(), layout->io_bytes);
  EXPECT_EQ(DeviceBuffer::allocations() - before, 3u);  // parameters, arena, I/O
  const DeviceTensor b = tensor_at(layout->slice(value(p, "b")), region_bases(s));
  float up[4] = {};
  ASSERT_EQ(cudaMemcpy(up, b.data, sizeof up, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(up, value(p, "b")->initializer()->raw_data(), sizeof up), 0)
      << "the bias is not at its slice";

  ASSERT_TRUE(compile_thunks(s, *layout, *kernels, options, load).is_ok());
  EXPECT_EQ(s.launches.size(), 3u);
  EXPECT_EQ(s.node_names[1], p.order[1]->describe());
  EXPECT_EQ(s.footprint.workspace, p.plan.workspace_bytes);
  EXPECT_EQ(DeviceBuffer::allocations() - before, p.plan.workspace_bytes > 0 ? 4u : 3u);

  ASSERT_TRUE(stage_io(s, *layout).is_ok());
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].device.data, tensor_at(layout->slice(value(p, "x")), region_bases(s)).data);
  ASSERT_EQ(s.outputs.size(), 1u);

  ASSERT_TRUE(capture_graph(s, load).is_ok());
  EXPECT_NE(s.graph_exec, nullptr);
  const ir::Tensor& x = inputs.at("x");
  std::memcpy(s.inputs[0].host.data(), x.raw_data(), x.nbytes());
  ASSERT_TRUE(s.launch_once().is_ok());
  ASSERT_EQ(cudaStreamSynchronize(s.stream), cudaSuccess);
  ir::Tensor y(ir::DType::kFloat, {2, 4});
  std::memcpy(y.mutable_raw_data(), s.outputs[0].host.data(), y.nbytes());
  EXPECT_EQ(test::outputs_difference({y}, *cpu), "");
}

}  // namespace
}  // namespace xopt::cuda
