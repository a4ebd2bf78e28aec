// convert-precision: golden before/after graphs (ONNX text) for each rule, a "does not apply" case
// for each, and a numerical check with the CPU executor (outputs within fp16/bf16 rounding of the
// fp32 model's, relative to each output's scale).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "executor/cpu/session.h"
#include "passes/pass_manager.h"
#include "passes/precision/precision_analysis.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

using passes::PrecisionMode;

// Rounding of a few fp16 ops on values of scale 1-10 (bf16 keeps 8 significand bits, not 11).
constexpr test::Tolerance kFp16{1e-2, 1e-3};
constexpr test::Tolerance kBf16{5e-2, 1e-2};

passes::PassContext context(PrecisionMode mode, bool keep_io = true) {
  passes::PassOptions o;
  o.precision.mode = mode;
  o.precision.keep_io_types = keep_io;
  return passes::PassContext(o);
}

test::PassOutcome convert(std::string_view text, passes::PassContext& ctx,
                          test::Tolerance tol = kFp16) {
  return test::run_pipeline("convert-precision", text, &ctx, tol);
}

// The outcome's graph is `after`; the model changed and computes what it did within `tol`.
#define EXPECT_CONVERTS(ctx, before, after, tol)                            \
  do {                                                                      \
    auto xopt_o_ = convert(before, ctx, tol);                               \
    ASSERT_TRUE(xopt_o_.status.is_ok()) << xopt_o_.status.message();        \
    EXPECT_TRUE(xopt_o_.changed);                                           \
    EXPECT_TRUE(xopt_o_.numerically_checked) << xopt_o_.why_unchecked;      \
    EXPECT_EQ(xopt_o_.text, ::xopt::test::canonical(after));                \
  } while (0)

#define EXPECT_NOT_CONVERTED(ctx, model)                                    \
  do {                                                                      \
    auto xopt_o_ = convert(model, ctx);                                     \
    ASSERT_TRUE(xopt_o_.status.is_ok()) << xopt_o_.status.message();        \
    EXPECT_FALSE(xopt_o_.changed);                                          \
    EXPECT_EQ(xopt_o_.text, ::xopt::test::canonical(model));                \
  } while (0)

int64_t counter(passes::PassContext& ctx, const char* name) {
  auto it = ctx.counters().find(name);
  return it == ctx.counters().end() ? 0 : it->second;
}

constexpr const char* kMlp = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4] x) => (float[2,4] y) <float[4,4] w = {1, 0.5, -1, 2, 0, 1, 1, -0.5, 2, 0, -1, 1, 0.25, 1, 0, 1}> {
    m = MatMul(x, w)
    y = Relu(m)
  })";

TEST(ConvertPrecision, Fp32ChangesNothing) {
  auto ctx = context(PrecisionMode::kFp32);
  EXPECT_NOT_CONVERTED(ctx, kMlp);
}

TEST(ConvertPrecision, Fp16KeepsIoTypesWithOneCastEachSide) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, kMlp, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) <float16[4,4] w = {1, 0.5, -1, 2, 0, 1, 1, -0.5, 2, 0, -1, 1, 0.25, 1, 0, 1}> {
      x_fp16 = Cast <to = 10> (x)
      m = MatMul (x_fp16, w)
      y_fp16 = Relu (m)
      y = Cast <to = 1> (y_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "nodes converted"), 2);
  EXPECT_EQ(counter(ctx, "weights converted"), 1);
  EXPECT_EQ(counter(ctx, "casts added"), 2);
}

TEST(ConvertPrecision, Bf16WithoutKeepIoTypesChangesTheGraphTypes) {
  auto ctx = context(PrecisionMode::kBf16, /*keep_io=*/false);
  EXPECT_CONVERTS(ctx, kMlp, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bfloat16[2,4] x) => (bfloat16[2,4] y) <bfloat16[4,4] w = {1, 0.5, -1, 2, 0, 1, 1, -0.5, 2, 0, -1, 1, 0.25, 1, 0, 1}> {
      m = MatMul (x, w)
      y = Relu (m)
    })", kBf16);
  EXPECT_EQ(counter(ctx, "casts added"), 0);
}

// One Cast per graph input, shared by its three readers; the output y is also read inside the
// graph: its readers take the fp16 result, the output its fp32 Cast.
TEST(ConvertPrecision, KeepIoTypesSharesOneCastAmongConsumers) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y, float[2,4] z) {
      a = Relu(x)
      b = Neg(x)
      y = Add(a, b)
      c = Sigmoid(x)
      z = Mul(y, c)
    })", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y, float[2,4] z) {
      x_fp16 = Cast <to = 10> (x)
      a = Relu (x_fp16)
      b = Neg (x_fp16)
      y_fp16 = Add (a, b)
      y = Cast <to = 1> (y_fp16)
      c = Sigmoid (x_fp16)
      z_fp16 = Mul (y_fp16, c)
      z = Cast <to = 1> (z_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "casts added"), 3);
}

// Nothing computes in fp32: integer arithmetic only.
TEST(ConvertPrecision, DoesNotApplyWithoutFloatNodes) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_NOT_CONVERTED(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[4] x) => (int64[4] y) {
      y = Add(x, x)
    })");
}

// Shape arithmetic in float (an exporter's x.size(0) * 1.5) flows into a Reshape's shape: it
// stays fp32, found from the Cast to int64 backwards and from the Cast of Shape forwards.
constexpr const char* kIntegerChain = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,6] x) => (float[3,4] y) <float[2] k = {1.5, 0.6666667}> {
    s = Shape(x)
    sf = Cast <to = 1> (s)
    r = Mul(sf, k)
    rr = Round(r)
    i = Cast <to = 7> (rr)
    a = Relu(x)
    y = Reshape(a, i)
  })";

TEST(ConvertPrecision, IntegerChainStaysFp32) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, kIntegerChain, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,6] x) => (float[3,4] y) <float[2] k = {1.5, 0.6666667}> {
      s = Shape(x)
      sf = Cast <to = 1> (s)
      r = Mul(sf, k)
      rr = Round(r)
      i = Cast <to = 7> (rr)
      x_fp16 = Cast <to = 10> (x)
      a = Relu(x_fp16)
      y_fp16 = Reshape(a, i)
      y = Cast <to = 1> (y_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "kept fp32 (integer)"), 2);
  auto analysis =
      passes::analyze_precision(test::parse_text(kIntegerChain), passes::PrecisionOptions{});
  ASSERT_TRUE(analysis.is_ok());
  EXPECT_EQ(analysis->integer_values, (std::vector<std::string>{"r", "rr", "sf"}));
  const passes::NodePrecision* mul = analysis->find("@r");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->rule, passes::PrecisionRule::kInteger);
  EXPECT_NE(mul->why.find("Cast"), std::string::npos) << mul->why;
}

// The same arithmetic on data (it flows into no shape) converts; and --no-auto converts the
// shape chain too (the naive converter).
TEST(ConvertPrecision, IntegerRuleDoesNotApplyToData) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,6] x) => (float[2,6] y) <float[6] k = {1.5, 0.5, 2, 1, 3, 0.25}> {
      r = Mul(x, k)
      y = Round(r)
    })", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,6] x) => (float[2,6] y) <float16[6] k = {1.5, 0.5, 2, 1, 3, 0.25}> {
      x_fp16 = Cast <to = 10> (x)
      r = Mul(x_fp16, k)
      y_fp16 = Round(r)
      y = Cast <to = 1> (y_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "kept fp32 (integer)"), 0);

  auto naive = context(PrecisionMode::kFp16);
  naive.mutable_options().precision.auto_rules = false;
  auto o = convert(kIntegerChain, naive);
  ASSERT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_EQ(counter(naive, "kept fp32 (integer)"), 0);
  EXPECT_NE(o.text.find("sf = Cast <to = 10> (s)"), std::string::npos) << o.text;
}

// An additive mask of -1e9 before a softmax: fp16 would make it -inf and a fully masked row NaN;
// it becomes fp16's safe lowest (-32752) and the row stays finite.
constexpr const char* kMasked = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4] q, float[2,4] k) => (float[2,2] p) <float[2,2] mask = {0, -1e9, -1e9, -1e9}> {
    kt = Transpose(k)
    s = MatMul(q, kt)
    a = Add(s, mask)
    p = Softmax <axis = -1> (a)
  })";

TEST(ConvertPrecision, MaskConstantGoesToTheSafeLowest) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, kMasked, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] q, float[2,4] k) => (float[2,2] p) <float16[2,2] mask = {0, -32752, -32752, -32752}> {
      k_fp16 = Cast <to = 10> (k)
      kt = Transpose(k_fp16)
      q_fp16 = Cast <to = 10> (q)
      s = MatMul(q_fp16, kt)
      a = Add(s, mask)
      p_fp16 = Softmax <axis = -1> (a)
      p = Cast <to = 1> (p_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "masks rewritten"), 1);
  EXPECT_EQ(counter(ctx, "values clamped"), 0);
  // The fully masked row is finite in fp16.
  ir::Model m = test::parse_text(kMasked);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("convert-precision").is_ok());
  auto run_ctx = context(PrecisionMode::kFp16);
  ASSERT_TRUE(pm.run(m, run_ctx).is_ok());
  auto out = exec::run_model(m, test::random_inputs(m));
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  for (int64_t i = 0; i < (*out)[0].numel(); ++i) EXPECT_TRUE(std::isfinite((*out)[0].as_double(i)));
}

// The same constant added without a softmax after it is no mask: it is clamped to fp16's range
// (counted), not moved to the safe lowest.
TEST(ConvertPrecision, MaskRuleDoesNotApplyWithoutSoftmax) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,2] s) => (float[2,2] p) <float[2,2] big = {0, -1e9, -1e9, -1e9}> {
      a = Add(s, big)
      p = Relu(a)
    })", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,2] s) => (float[2,2] p) <float16[2,2] big = {0, -65504, -65504, -65504}> {
      s_fp16 = Cast <to = 10> (s)
      a = Add(s_fp16, big)
      p_fp16 = Relu(a)
      p = Cast <to = 1> (p_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "masks rewritten"), 0);
  EXPECT_EQ(counter(ctx, "values clamped"), 3);
}

// fp16 -> fp32 -> fp16 is lossless and goes; fp32 -> fp16 -> fp32 rounds and stays.
TEST(ConvertPrecision, RemovesOnlyLosslessCastPairs) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = test::run_pipeline("convert-precision", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[2,4] x, float[2,4] f) => (float16[2,4] z, float[2,4] w) {
      y = Cast <to = 1> (x)
      h = Cast <to = 10> (y)
      z = Relu(h)
      a = Cast <to = 10> (f)
      w = Cast <to = 1> (a)
    })", &ctx, test::kExact);
  ASSERT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_TRUE(o.changed);
  EXPECT_EQ(o.text, test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[2,4] x, float[2,4] f) => (float16[2,4] z, float[2,4] w) {
      z = Relu(x)
      a = Cast <to = 10> (f)
      w = Cast <to = 1> (a)
    })"));
  EXPECT_EQ(counter(ctx, "casts removed"), 2);
}

TEST(ConvertPrecision, LossyCastPairDoesNotApply) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_NOT_CONVERTED(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] f) => (float[2,4] w) {
      a = Cast <to = 10> (f)
      w = Cast <to = 1> (a)
    })");
}

// Celu has only float in its schema: it stays fp32 between Casts.
TEST(ConvertPrecision, SchemaWithoutFp16KeepsTheNodeFp32) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) {
      a = Relu(x)
      b = Celu(a)
      y = Neg(b)
    })", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) {
      x_fp16 = Cast <to = 10> (x)
      a = Relu(x_fp16)
      a_fp32 = Cast <to = 1> (a)
      b = Celu(a_fp32)
      b_fp16 = Cast <to = 10> (b)
      y_fp16 = Neg(b_fp16)
      y = Cast <to = 1> (y_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "kept fp32 (schema)"), 1);
}

// Conv has bfloat16 from opset 22 only: at 17 it stays fp32 in bf16, at 22 it converts.
TEST(ConvertPrecision, SchemaIsReadAtTheModelsOpset) {
  const std::string body = R"( g (float[1,2,4,4] x) => (float[1,3,4,4] y)
      <float[3,2,1,1] w = {1, -2, 3, -4, 5, -6}> {
      y = Conv(x, w)
    })";
  auto at17 = context(PrecisionMode::kBf16);
  EXPECT_NOT_CONVERTED(at17, R"(<ir_version: 8, opset_import: ["" : 17]>)" + body);
  EXPECT_EQ(counter(at17, "kept fp32 (schema)"), 1);
  auto at22 = context(PrecisionMode::kBf16);
  auto o = convert(R"(<ir_version: 10, opset_import: ["" : 22]>)" + body, at22, kBf16);
  ASSERT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_TRUE(o.changed);
  EXPECT_EQ(counter(at22, "nodes converted"), 1);
  auto analysis = passes::analyze_precision(
      test::parse_text(R"(<ir_version: 8, opset_import: ["" : 17]>)" + body), {});
  ASSERT_TRUE(analysis.is_ok());
  const passes::NodePrecision* conv = analysis->find("@y");
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE(conv->fp16);
  EXPECT_FALSE(conv->bf16);
  EXPECT_EQ(conv->rule, passes::PrecisionRule::kSchema);
}

// An If's branches are converted inside, their boundary (the outer x, the If's result) fp32 as
// the outer scope sees it.
TEST(ConvertPrecision, SubgraphBodiesConvertConsistently) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_CONVERTS(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2,4] x) => (float[2,4] y) {
      y = If(c) <
        then_branch = then_g () => (float[2,4] t) { r = Relu(x)  t = Neg(r) },
        else_branch = else_g () => (float[2,4] e) { e = Sigmoid(x) }>
    })", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2,4] x) => (float[2,4] y) {
      y = If(c) <
        then_branch = then_g () => (float[2,4] t) {
          x_fp16 = Cast <to = 10> (x)
          r = Relu(x_fp16)
          t_fp16 = Neg(r)
          t = Cast <to = 1> (t_fp16)
        },
        else_branch = else_g () => (float[2,4] e) {
          x_fp16 = Cast <to = 10> (x)
          e_fp16 = Sigmoid(x_fp16)
          e = Cast <to = 1> (e_fp16)
        }>
    })", kFp16);
  EXPECT_EQ(counter(ctx, "kept fp32 (subgraph)"), 1);
}

TEST(ConvertPrecision, SubgraphWithoutFloatsDoesNotApply) {
  auto ctx = context(PrecisionMode::kFp16);
  EXPECT_NOT_CONVERTED(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, int64[2] x) => (int64[2] y) {
      y = If(c) <
        then_branch = then_g () => (int64[2] t) { t = Neg(x) },
        else_branch = else_g () => (int64[2] e) { e = Abs(x) }>
    })");
}

// --keep-fp32 by op type, by node name and by /regex/; --force-lowp over the integer rule.
TEST(ConvertPrecision, UserChoices) {
  auto named = [](std::string_view text) {
    ir::Model m = test::parse_text(text);
    for (ir::Node* n : m.graph->nodes()) n->set_name("/layer/" + n->output(0)->name());
    return m;
  };
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) {
      a = Relu(x)
      b = Neg(a)
      c = Sigmoid(b)
      y = Tanh(c)
    })";
  for (const std::vector<std::string>& keep :
       {std::vector<std::string>{"Neg", "/layer/c"}, std::vector<std::string>{"/^/layer/[bc]$/"}}) {
    ir::Model m = named(text);
    passes::PrecisionOptions o;
    o.mode = PrecisionMode::kFp16;
    o.keep_fp32 = keep;
    auto a = passes::analyze_precision(m, o);
    ASSERT_TRUE(a.is_ok()) << a.status().message();
    EXPECT_TRUE(a->allows("/layer/a", ir::DType::kFloat16));
    EXPECT_FALSE(a->allows("/layer/b", ir::DType::kFloat16));
    EXPECT_FALSE(a->allows("/layer/c", ir::DType::kFloat16));
    EXPECT_EQ(a->find("/layer/c")->rule, passes::PrecisionRule::kUser);
    EXPECT_TRUE(a->allows("/layer/y", ir::DType::kFloat16));
  }
  passes::PrecisionOptions bad;
  bad.keep_fp32 = {"/[/"};
  auto e = passes::analyze_precision(named(text), bad);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("--keep-fp32 '/[/'"), std::string::npos);

  // Forced: the shape chain's Mul goes to fp16 (never a schema-less op: Celu stays).
  passes::PrecisionOptions force;
  force.mode = PrecisionMode::kFp16;
  force.force_lowp = {"Mul", "Celu"};
  auto f = passes::analyze_precision(test::parse_text(kIntegerChain), force);
  ASSERT_TRUE(f.is_ok());
  EXPECT_TRUE(f->allows("@r", ir::DType::kFloat16));
  EXPECT_FALSE(f->allows("@rr", ir::DType::kFloat16));
}

TEST(ConvertPrecision, KeepFp32IsNumericallyCheckedToo) {
  auto ctx = context(PrecisionMode::kFp16);
  ctx.mutable_options().precision.keep_fp32 = {"MatMul"};
  EXPECT_CONVERTS(ctx, kMlp, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) <float[4,4] w = {1, 0.5, -1, 2, 0, 1, 1, -0.5, 2, 0, -1, 1, 0.25, 1, 0, 1}> {
      m = MatMul (x, w)
      m_fp16 = Cast <to = 10> (m)
      y_fp16 = Relu (m_fp16)
      y = Cast <to = 1> (y_fp16)
    })", kFp16);
  EXPECT_EQ(counter(ctx, "kept fp32 (user)"), 1);
}

// mixed: the chooser names each node's type; the pass records the decisions.
TEST(ConvertPrecision, MixedFollowsTheChooserAndRecordsIt) {
  auto ctx = context(PrecisionMode::kMixed);
  int calls = 0;
  ctx.mutable_options().precision.choose = [&](const ir::Model&, const passes::PrecisionOptions&) {
    ++calls;
    return Result<passes::PrecisionChoice>(
        passes::PrecisionChoice{{"@m", ir::DType::kFloat16}, {"@y", ir::DType::kFloat}});
  };
  ir::Model m = test::parse_text(kMlp);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("convert-precision").is_ok());
  ASSERT_TRUE(pm.run(m, ctx).is_ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ir::print_graph_text(m), test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) <float16[4,4] w = {1, 0.5, -1, 2, 0, 1, 1, -0.5, 2, 0, -1, 1, 0.25, 1, 0, 1}> {
      x_fp16 = Cast <to = 10> (x)
      m = MatMul (x_fp16, w)
      m_fp32 = Cast <to = 1> (m)
      y = Relu (m_fp32)
    })"));
  auto record = m.metadata("xopt.precision");
  ASSERT_TRUE(record.has_value());
  auto j = nlohmann::json::parse(*record);
  EXPECT_EQ(j["mode"], "mixed");
  EXPECT_EQ(j["nodes"]["@m"]["type"], "float16");
  EXPECT_EQ(j["nodes"]["@y"]["type"], "float");
  EXPECT_EQ(j["nodes"]["@y"]["rule"], "choice");

  auto none = context(PrecisionMode::kMixed);
  ir::Model m2 = test::parse_text(kMlp);
  passes::PassManager pm2;
  ASSERT_TRUE(pm2.add_pipeline("convert-precision").is_ok());
  Status s = pm2.run(m2, none);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("needs a chooser"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace xopt
