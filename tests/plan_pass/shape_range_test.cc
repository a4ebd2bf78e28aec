// Plans for a range of input shapes (--input-shape x=MIN:MAX, planner/shape_range.h): a model with
// a symbolic width planned for W in 32..2048 runs inside its arena at both ends and in between,
// bit for bit as without a plan, and is refused outside the range naming the input and dim; a
// model with a value that shrinks as W grows is refused at planning, naming the value.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "executor/cpu/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "passes/pass_manager.h"
#include "planner/annotate.h"
#include "planner/memory_plan.h"
#include "planner/shape_range.h"
#include "tests/util/equivalence.h"

namespace xopt::passes {
namespace {

// Relu, Transpose, MatMul over the width, Swish, Transpose back: every activation grows with W.
std::string width_model() {
  return std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,8,W] x) => (float[1,16,W] y) <)") +
         test::random_initializer("w", {8, 16}, 3) + ", " +
         test::random_initializer("b", {16, 1}, 4) + R"(> {
  a = Relu(x)
  t = Transpose<perm = [0, 2, 1]>(a)
  m = MatMul(t, w)
  s = Sigmoid(m)
  p = Mul(m, s)
  t2 = Transpose<perm = [0, 2, 1]>(p)
  y = Add(t2, b)
}
)";
}

// `tail` has 4096 - W elements: it shrinks as the input grows, so no plan made at W = 2048 holds
// it at W = 32.
constexpr const char* kShrinking = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,W] x) => (float[1,W] y, float[N] z) <int64[1] one = {1}, int64[1] two = {2},
                                                  int64[1] total = {4096}> {
  s = Shape(x)
  w = Slice(s, one, two)
  n = Sub(total, w)
  tail = ConstantOfShape(n)
  tail2 = Sigmoid(tail)
  z = Relu(tail2)
  y = Relu(x)
}
)";

planner::InputRange width_range(int64_t lo, int64_t hi) {
  planner::InputRange r;
  r.name = "x";
  r.min = {1, 8, lo};
  r.max = {1, 8, hi};
  return r;
}

Result<planner::MemoryPlan> plan_for(ir::Model& model, std::vector<planner::InputRange> ranges) {
  XOPT_RETURN_IF_ERROR(planner::bind_range(*model.graph, ranges));
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*model.graph));
  PassManagerOptions pmo;
  pmo.verify_each = true;
  PassManager pm(pmo);
  XOPT_RETURN_IF_ERROR(pm.add_pipeline("plan"));
  PassOptions options;
  options.shape_ranges = std::move(ranges);
  PassContext ctx(std::move(options));
  XOPT_RETURN_IF_ERROR(pm.run(model, ctx));
  if (!ctx.plan_outcome()) return internal_error("no plan made");
  return ctx.plan_outcome()->plan;
}

ir::Tensor input_of_width(int64_t width, uint32_t seed) {
  ir::Tensor t(ir::DType::kFloat, {1, 8, width});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
  return t;
}

TEST(ShapeRange, WidthPlannedAtTheMaxRunsAnywhereInTheRange) {
  auto model = ir::parse_model_text(width_model());
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto plan = plan_for(*model, {width_range(32, 2048)});
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->input_ranges.size(), 1u);
  EXPECT_EQ(plan->input_ranges[0].max, (std::vector<int64_t>{1, 8, 2048}));
  // Planned at the max: t (1x2048x8 floats) is the smallest activation there.
  const planner::PlannedValue* t = plan->find("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->bytes, 2048u * 8 * 4);
  EXPECT_GT(plan->min_arena_bytes, 0u);
  EXPECT_LT(plan->min_arena_bytes, plan->arena_bytes);
  // The stored form keeps the range.
  auto stored = planner::read_plan(*model);
  ASSERT_TRUE(stored.is_ok()) << stored.status().message();
  ASSERT_EQ(stored->input_ranges.size(), 1u);
  EXPECT_EQ(stored->input_ranges[0].min, (std::vector<int64_t>{1, 8, 32}));
  EXPECT_EQ(stored->min_arena_bytes, plan->min_arena_bytes);

  for (int64_t width : {32, 2048, 500, 33, 2047}) {
    SCOPED_TRACE("W = " + std::to_string(width));
    std::map<std::string, ir::Tensor> inputs{{"x", input_of_width(width, 11)}};
    exec::RunStats stats;
    exec::RunOptions ro;
    ro.plan = &*stored;
    ro.stats = &stats;
    ro.threads = 1;
    exec::RunOptions simple_ro;
    simple_ro.threads = 1;
    auto simple = exec::run_model(*model, inputs, simple_ro);
    ASSERT_TRUE(simple.is_ok()) << simple.status().message();
    auto planned = exec::run_model(*model, inputs, ro);
    ASSERT_TRUE(planned.is_ok()) << planned.status().message();
    EXPECT_EQ(stats.arena_bytes, plan->arena_bytes);  // the one arena, whatever the width
    ASSERT_EQ(planned->size(), 1u);
    const ir::Tensor& a = (*simple)[0];
    const ir::Tensor& b = (*planned)[0];
    ASSERT_EQ(a.dims(), (std::vector<int64_t>{1, 16, width}));
    ASSERT_EQ(b.dims(), a.dims());
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0) << "not bit for bit";
  }

  for (int64_t width : {2049, 16}) {
    SCOPED_TRACE("W = " + std::to_string(width));
    exec::RunOptions ro;
    ro.plan = &*stored;
    auto r = exec::run_model(*model, {{"x", input_of_width(width, 5)}}, ro);
    ASSERT_FALSE(r.is_ok());
    const std::string& msg = r.status().message();
    EXPECT_NE(msg.find("input 'x'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dim 2 is " + std::to_string(width)), std::string::npos) << msg;
    EXPECT_NE(msg.find("32..2048"), std::string::npos) << msg;
  }
}

TEST(ShapeRange, ValueThatShrinksAsTheWidthGrowsIsRefused) {
  auto model = ir::parse_model_text(kShrinking);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  planner::InputRange r;
  r.name = "x";
  r.min = {1, 32};
  r.max = {1, 2048};
  auto plan = plan_for(*model, {r});
  ASSERT_FALSE(plan.is_ok());
  const std::string& msg = plan.status().message();
  EXPECT_NE(msg.find("value 'tail'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not monotone"), std::string::npos) << msg;

  // One shape of it plans: the check is about the range.
  auto again = ir::parse_model_text(kShrinking);
  ASSERT_TRUE(again.is_ok());
  r.min = r.max;
  EXPECT_TRUE(plan_for(*again, {r}).is_ok());
}

TEST(ShapeRange, RangeChecks) {
  planner::InputRange r = width_range(64, 32);
  EXPECT_NE(planner::check_ranges({r}).message().find("min 64 above max 32"), std::string::npos);
  r = width_range(32, 64);
  r.opt = {1, 8, 100};
  EXPECT_NE(planner::check_ranges({r}).message().find("opt 100 outside 32..64"), std::string::npos);
  auto parsed = parse_input_shape_range("x=1x8x32:1x8x64:1x8x2048");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  EXPECT_EQ(parsed->opt, (std::vector<int64_t>{1, 8, 64}));
  EXPECT_FALSE(parse_input_shape_range("x=1x8x32:1x8").is_ok());
  EXPECT_FALSE(parse_input_shape_range("x=1:2:3:4").is_ok());
  // A dim the model fixes cannot vary.
  auto model = ir::parse_model_text(width_model());
  ASSERT_TRUE(model.is_ok());
  planner::InputRange fixed;
  fixed.name = "x";
  fixed.min = {1, 4, 32};
  fixed.max = {1, 8, 32};
  Status st = planner::bind_range(*model->graph, {fixed});
  EXPECT_NE(st.message().find("dimension 1 is fixed to 8"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace xopt::passes
