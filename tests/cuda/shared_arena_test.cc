// Three models in one shared arena on the GPU: each runs in turn inside the group's one arena and
// workspace and gives its solo outputs (the CPU twin states them); a model cannot run while another
// holds the arena; the group allocates its arena and workspace once.
#include <gtest/gtest.h>

#include "executor/cpu/session.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/session.h"
#include "executor/cuda/shared_arena.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/planner.h"
#include "planner/shared_arena.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

namespace xopt::cuda {
namespace {

struct Member {
  ir::Model model;
  planner::MemoryPlan plan;
  std::map<std::string, ir::Tensor> inputs;
  std::vector<ir::Tensor> solo;  // the CPU executor's outputs
};

Member make(const std::string& text) {
  Member m;
  auto parsed = ir::parse_model_text(text);
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  m.model = std::move(parsed).value();
  EXPECT_TRUE(ir::infer_shapes(*m.model.graph).is_ok());
  auto p = planner::plan(*m.model.graph);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  m.plan = *p;
  m.inputs = test::random_inputs(m.model);
  exec::RunOptions ro;
  ro.plan = &m.plan;
  auto out = exec::run_model(m.model, m.inputs, ro);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  m.solo = *out;
  // The twin's answer must be able to tell a wrong GPU result from a right one (a model whose
  // output is all zeros cannot: it was, once).
  EXPECT_EQ(test::outputs_difference(m.solo, m.solo), "");
  return m;
}

TEST(CudaSharedArena, ThreeModelsRunInTurnInOneArena) {
  std::vector<Member> ms;
  ms.push_back(make(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[8,64] x) => (float[8,64] y) { a = Exp(x)  b = Neg(x)  c = Add(a, b)  y = Relu(c) })"));
  ms.push_back(make(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,32,32] x) => (float[2,4,15,15] y) <float[4,3,3,3] w = {
      1,0,-1,2,0,-2,1,0,-1, 1,2,1,0,0,0,-1,-2,-1, 0,1,0,1,-4,1,0,1,0, 1,1,1,1,1,1,1,1,1,
      1,0,-1,2,0,-2,1,0,-1, 1,2,1,0,0,0,-1,-2,-1, 0,1,0,1,-4,1,0,1,0, 1,1,1,1,1,1,1,1,1,
      1,0,-1,2,0,-2,1,0,-1, 1,2,1,0,0,0,-1,-2,-1, 0,1,0,1,-4,1,0,1,0, 1,1,1,1,1,1,1,1,1}> {
      c = Conv(x, w)  r = Relu(c)  y = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (r) })"));
  ms.push_back(make(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[16,128] x) => (float[16,1] y) {
      s = Softmax(x)  l = Log(s)  y = ReduceSum <keepdims = 1> (l, ) })"));
  std::vector<const planner::MemoryPlan*> plans;
  plans.reserve(ms.size());
  for (const Member& m : ms) plans.push_back(&m.plan);
  auto shared = planner::share_arena({"a", "b", "c"}, plans);
  ASSERT_TRUE(shared.is_ok()) << shared.status().message();
  const planner::SharedArenaFigures f = planner::shared_arena_figures(*shared, plans);
  EXPECT_LT(f.shared_total, f.separate_total);
  XOPT_REQUIRE_GPU();
  const size_t allocs = DeviceBuffer::allocations();
  auto arena = SharedDeviceArena::create(*shared);
  ASSERT_TRUE(arena.is_ok()) << arena.status().message();
  const size_t shared_allocs = DeviceBuffer::allocations() - allocs;
  std::vector<std::unique_ptr<Session>> sessions;
  SessionOptions o;
  o.shared_arena = *arena;
  for (const Member& m : ms) {
    auto s = Session::create(m.model, m.plan, o);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    sessions.push_back(std::move(s).value());
  }
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < ms.size(); ++i) {
      auto out = sessions[i]->run(ms[i].inputs);
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      EXPECT_EQ(test::outputs_difference(*out, ms[i].solo), "") << "model " << i;
    }
  // The arena and workspace were allocated once, by the group.
  EXPECT_EQ(shared_allocs, static_cast<size_t>((shared->arena_bytes > 0 ? 1 : 0) +
                                               (shared->workspace_bytes > 0 ? 1 : 0)));
  // While one holds the arena, another is refused, naming the group.
  ASSERT_TRUE((*arena)->try_acquire());
  auto refused = sessions[1]->run(ms[1].inputs);
  (*arena)->release();
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("another model is running"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find(shared->id), std::string::npos);
  auto again = sessions[1]->run(ms[1].inputs);
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  // A plan larger than the group's arena is refused.
  planner::SharedArena tiny = *shared;
  tiny.arena_bytes = 0;
  auto small = SharedDeviceArena::create(tiny);
  ASSERT_TRUE(small.is_ok());
  SessionOptions so;
  so.shared_arena = *small;
  auto no = Session::create(ms[0].model, ms[0].plan, so);
  ASSERT_FALSE(no.is_ok());
  EXPECT_NE(no.status().message().find("cannot hold this plan"), std::string::npos);
}

}  // namespace
}  // namespace xopt::cuda
