// Where --precision puts convert-precision in a pipeline, what the plan shows after it, and the
// model that overflows when every node goes to fp16 (--no-auto).
#include <gtest/gtest.h>

#include <cmath>

#include "executor/cpu/session.h"
#include "passes/pass_manager.h"
#include "passes/precision/precision_pipeline.h"
#include "planner/planner.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

using passes::PrecisionMode;

std::vector<std::string> pipeline(const std::string& spec, PrecisionMode mode) {
  passes::PassManager pm;
  EXPECT_TRUE(pm.add_pipeline(spec).is_ok());
  passes::PrecisionOptions o;
  o.mode = mode;
  EXPECT_TRUE(passes::add_precision_pass(pm, o).is_ok());
  return pm.pass_names();
}

size_t index_of(const std::vector<std::string>& names, const std::string& n) {
  return static_cast<size_t>(std::find(names.begin(), names.end(), n) - names.begin());
}

TEST(PrecisionPipeline, PrecisionRunsRightBeforePlanMemory) {
  auto names = pipeline("fold,fuse,plan", PrecisionMode::kFp16);
  const size_t c = index_of(names, "convert-precision"), p = index_of(names, "plan-memory");
  ASSERT_LT(c, names.size());
  EXPECT_EQ(c + 1, p);
  EXPECT_EQ(std::count(names.begin(), names.end(), "convert-precision"), 1);
}

TEST(PrecisionPipeline, LastWithoutAPlan) {
  auto names = pipeline("fold,fuse", PrecisionMode::kBf16);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.back(), "convert-precision");
}

TEST(PrecisionPipeline, NamedGroupAndFp32AddNothing) {
  auto named = pipeline("fuse,precision,plan", PrecisionMode::kFp16);
  EXPECT_EQ(std::count(named.begin(), named.end(), "convert-precision"), 1);
  EXPECT_LT(index_of(named, "convert-precision"), index_of(named, "reorder"));
  auto fp32 = pipeline("fold,fuse,plan", PrecisionMode::kFp32);
  EXPECT_EQ(std::count(fp32.begin(), fp32.end(), "convert-precision"), 0);
}

// The plan is made in the new sizes: a Gemm chain's parameters and arena halve in fp16.
TEST(PrecisionPipeline, PlanIsMadeInTheNewSizes) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[64,256] x) => (float[64,256] y) <)" +
                           test::random_initializer("w1", {256, 256}, 1) + ", " +
                           test::random_initializer("w2", {256, 256}, 2) + R"(> {
      a = MatMul(x, w1)
      b = Relu(a)
      c = MatMul(b, w2)
      y = Relu(c)
    })";
  size_t arena[2], params[2];
  for (int lowp = 0; lowp < 2; ++lowp) {
    ir::Model m = test::parse_text(text);
    passes::PassManager pm;
    ASSERT_TRUE(pm.add_pipeline("plan").is_ok());
    passes::PrecisionOptions o;
    o.mode = lowp ? PrecisionMode::kFp16 : PrecisionMode::kFp32;
    ASSERT_TRUE(passes::add_precision_pass(pm, o).is_ok());
    passes::PassOptions po;
    po.precision = o;
    passes::PassContext ctx(po);
    ASSERT_TRUE(pm.run(m, ctx).is_ok());
    ASSERT_TRUE(ctx.plan_outcome().has_value());
    arena[lowp] = ctx.plan_outcome()->plan.arena_bytes;
    params[lowp] = planner::parameter_bytes(*m.graph, 1);
  }
  std::printf("arena %zu -> %zu bytes, parameters %zu -> %zu bytes\n", arena[0], arena[1],
              params[0], params[1]);
  EXPECT_EQ(params[1] * 2, params[0]);
  EXPECT_LE(arena[1] * 100, arena[0] * 55);
}

// A residual stream whose values pass 65504 and a softmax over a row masked with -1e9: fine in
// fp32; with every node in fp16 (--no-auto) the stream overflows to inf and the masked row is NaN.
// With the rules on, the mask is rewritten and that row stays finite; the stream's overflow needs
// a range rule from calibration (--precision mixed keeps those nodes fp32).
constexpr const char* kOverflow = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4] x) => (float[2,4] h, float[2,2] p)
    <float[4,4] w = {60, 0, 0, 0, 0, 60, 0, 0, 0, 0, 60, 0, 0, 0, 0, 60},
     float[2,2] mask = {0, 0, -1e9, -1e9}> {
    m1 = MatMul(x, w)
    r1 = Add(x, m1)
    m2 = MatMul(r1, w)
    r2 = Add(r1, m2)
    m3 = MatMul(r2, w)
    h = Add(r2, m3)
    xt = Transpose(x)
    s = MatMul(x, xt)
    a = Add(s, mask)
    p = Softmax <axis = -1> (a)
  })";

struct Finite {
  bool h = true, p = true, p_row1 = true;
};
Finite run_converted(PrecisionMode mode, bool auto_rules) {
  ir::Model m = test::parse_text(kOverflow);
  passes::PassManager pm;
  EXPECT_TRUE(pm.add_pipeline("convert-precision").is_ok());
  passes::PassOptions o;
  o.precision.mode = mode;
  o.precision.auto_rules = auto_rules;
  passes::PassContext ctx(o);
  EXPECT_TRUE(pm.run(m, ctx).is_ok());
  std::map<std::string, ir::Tensor> in = {
      {"x", ir::Tensor::of<float>({2, 4}, {1.5f, -2, 1, 0.5f, 2, 1, -1.5f, 1})}};
  auto out = exec::run_model(m, in);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  Finite f;
  if (!out.is_ok()) return f;
  for (int64_t i = 0; i < (*out)[0].numel(); ++i) f.h = f.h && std::isfinite((*out)[0].as_double(i));
  for (int64_t i = 0; i < 4; ++i) {
    const bool ok = std::isfinite((*out)[1].as_double(i));
    f.p = f.p && ok;
    if (i >= 2) f.p_row1 = f.p_row1 && ok;
  }
  return f;
}

TEST(PrecisionOverflow, EveryNodeInFp16OverflowsAndMasksGoNaN) {
  Finite fp32 = run_converted(PrecisionMode::kFp32, true);
  EXPECT_TRUE(fp32.h);
  EXPECT_TRUE(fp32.p);
  Finite naive = run_converted(PrecisionMode::kFp16, /*auto_rules=*/false);
  EXPECT_FALSE(naive.h) << "the residual stream passes 65504";
  EXPECT_FALSE(naive.p_row1) << "a -inf row gives NaN";
  Finite rules = run_converted(PrecisionMode::kFp16, true);
  EXPECT_TRUE(rules.p) << "the mask rule keeps the masked row finite";
  EXPECT_FALSE(rules.h) << "the stream's range is the mixed chooser's to catch";
}

}  // namespace
}  // namespace xopt
