// convert-precision: golden before/after graphs (ONNX text) for each rule, a "does not apply" case
// for each, and a numerical check with the CPU executor (outputs within fp16/bf16 rounding of the
// fp32 model's, relative to each output's scale).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "executor/cpu/session.h"
#include "ir/shape_inference.h"
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

// `text` without its first newline and the indentation its lines share: the graph as
// ir::print_graph_text prints it (fp16/bf16 initializers print as their signature, which the ONNX
// text parser cannot read back, so those expectations are written in the printer's form).
std::string dedent(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  std::vector<std::string> lines;
  size_t indent = std::string::npos;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos) indent = std::min(indent, first);
    lines.push_back(std::move(line));
  }
  std::string out;
  for (const std::string& l : lines)
    if (l.find_first_not_of(' ') != std::string::npos) out += l.substr(indent) + "\n";
  return out;
}

// Expects the pass to change `before` into `after` (ONNX text, or the printer's form when it
// starts with "g (" after dedenting) and the CPU executor to get the same outputs within `tol`.
test::PassOutcome expect_converts(passes::PassContext& ctx, std::string_view before,
                                  std::string_view after, test::Tolerance tol) {
  test::PassOutcome o = convert(before, ctx, tol);
  EXPECT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_TRUE(o.changed);
  EXPECT_TRUE(o.numerically_checked) << o.why_unchecked;
  const std::string printed = dedent(after);
  EXPECT_EQ(o.text, printed.rfind("g (", 0) == 0 ? printed : test::canonical(after));
  return o;
}

void expect_not_converted(passes::PassContext& ctx, std::string_view model) {
  test::PassOutcome o = convert(model, ctx);
  EXPECT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_FALSE(o.changed);
  EXPECT_EQ(o.text, test::canonical(model));
}

// The model of `text` after convert-precision in `mode` (rules on).
ir::Model converted(std::string_view text, PrecisionMode mode) {
  ir::Model m = test::parse_text(text);
  passes::PassManager pm;
  EXPECT_TRUE(pm.add_pipeline("convert-precision").is_ok());
  auto ctx = context(mode);
  Status s = pm.run(m, ctx);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return m;
}

// An initializer's values as floats (fp16, bf16 or fp32).
std::vector<float> initializer_values(const ir::Model& m, const std::string& name) {
  const ir::Value* v = m.graph->find_value(name);
  if (v == nullptr || v->initializer() == nullptr) return {};
  std::vector<float> out;
  for (int64_t i = 0; i < v->initializer()->numel(); ++i)
    out.push_back(static_cast<float>(v->initializer()->as_double(i)));
  return out;
}

int64_t counter(const test::PassOutcome& o, const char* name) {
  return test::counter(o.stats, "convert-precision", name);
}

// The model of `text` with its types and shapes inferred (analyze_precision reads them).
ir::Model inferred(std::string_view text) {
  ir::Model m = test::parse_text(text);
  Status s = ir::infer_shapes(*m.graph);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return m;
}

constexpr const char* kMlp = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4] x) => (float[2,4] y) <float[4,4] w = {1, 0.5, -1, 2, 0, 1, 1, -0.5, 2, 0, -1, 1, 0.25, 1, 0, 1}> {
    m = MatMul(x, w)
    y = Relu(m)
  })";

TEST(ConvertPrecision, Fp32ChangesNothing) {
  auto ctx = context(PrecisionMode::kFp32);
  expect_not_converted(ctx, kMlp);
}

TEST(ConvertPrecision, Fp16KeepsIoTypesWithOneCastEachSide) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = expect_converts(ctx, kMlp, R"(
    g (float[2,4] x) => (float[2,4] y)
       <float16[4,4] w ...>
    {
       x_fp16 = Cast<to = 10>(x)
       m = MatMul(x_fp16, w)
       y_fp16 = Relu(m)
       y = Cast<to = 1>(y_fp16)
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "nodes converted"), 2);
  EXPECT_EQ(counter(o, "weights converted"), 1);
  EXPECT_EQ(counter(o, "casts added"), 2);
}

TEST(ConvertPrecision, Bf16WithoutKeepIoTypesChangesTheGraphTypes) {
  // The graph's own types change, so the fp32 model's inputs no longer fit: the numbers are
  // checked by feeding the bf16 model bf16 inputs.
  ir::Model m = test::parse_text(kMlp);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("convert-precision").is_ok());
  auto ctx = context(PrecisionMode::kBf16, /*keep_io=*/false);
  passes::PipelineStats stats;
  ASSERT_TRUE(pm.run(m, ctx, &stats).is_ok());
  EXPECT_EQ(ir::print_graph_text(m), dedent(R"(
    g (bfloat16[2,4] x) => (bfloat16[2,4] y)
       <bfloat16[4,4] w ...>
    {
       m = MatMul(x, w)
       y = Relu(m)
    })"));
  EXPECT_EQ(test::counter(stats, "convert-precision", "casts added"), 0);
  ir::Model original = test::parse_text(kMlp);
  auto inputs = test::random_inputs(original);
  auto want = exec::run_model(original, inputs);
  ASSERT_TRUE(want.is_ok());
  ir::Tensor x16(ir::DType::kBFloat16, {2, 4});
  for (int64_t i = 0; i < 8; ++i)
    x16.mutable_data<uint16_t>()[i] = ir::float_to_bfloat16(inputs["x"].data<float>()[i]);
  auto got = exec::run_model(m, {{"x", x16}});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ((*got)[0].dtype(), ir::DType::kBFloat16);
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_NEAR((*got)[0].as_double(i), (*want)[0].as_double(i), 0.05) << i;
}

// One Cast per graph input, shared by its three readers; the output y is also read inside the
// graph: its readers take the fp16 result, the output its fp32 Cast.
TEST(ConvertPrecision, KeepIoTypesSharesOneCastAmongConsumers) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = expect_converts(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y, float[2,4] z) {
      a = Relu(x)
      b = Neg(x)
      y = Add(a, b)
      c = Sigmoid(x)
      z = Mul(y, c)
    })",
                           R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y, float[2,4] z) {
      x_fp16 = Cast <to = 10> (x)
      a = Relu (x_fp16)
      b = Neg (x_fp16)
      y_fp16 = Add (a, b)
      c = Sigmoid (x_fp16)
      z_fp16 = Mul (y_fp16, c)
      y = Cast <to = 1> (y_fp16)
      z = Cast <to = 1> (z_fp16)
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "casts added"), 3);
}

// Nothing computes in fp32: integer arithmetic only.
TEST(ConvertPrecision, DoesNotApplyWithoutFloatNodes) {
  auto ctx = context(PrecisionMode::kFp16);
  expect_not_converted(ctx, R"(
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
  auto o = expect_converts(ctx, kIntegerChain, R"(
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
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "kept fp32 (integer)"), 2);
  auto analysis = passes::analyze_precision(inferred(kIntegerChain), passes::PrecisionOptions{});
  ASSERT_TRUE(analysis.is_ok());
  EXPECT_EQ(analysis->integer_values, (std::vector<std::string>{"k", "r", "rr", "sf"}));
  const passes::NodePrecision* mul = analysis->find("@r");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->rule, passes::PrecisionRule::kInteger);
  EXPECT_NE(mul->why.find("Cast"), std::string::npos) << mul->why;
}

// The same arithmetic on data (it flows into no shape) converts; and --no-auto converts the
// shape chain too (the naive converter).
TEST(ConvertPrecision, IntegerRuleDoesNotApplyToData) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = expect_converts(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,6] x) => (float[2,6] y) <float[6] k = {1.5, 0.5, 2, 1, 3, 0.25}> {
      r = Mul(x, k)
      y = Round(r)
    })",
                           R"(
    g (float[2,6] x) => (float[2,6] y)
       <float16[6] k ...>
    {
       x_fp16 = Cast<to = 10>(x)
       r = Mul(x_fp16, k)
       y_fp16 = Round(r)
       y = Cast<to = 1>(y_fp16)
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "kept fp32 (integer)"), 0);

  auto naive = context(PrecisionMode::kFp16);
  naive.mutable_options().precision.auto_rules = false;
  o = convert(kIntegerChain, naive);
  ASSERT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_EQ(counter(o, "kept fp32 (integer)"), 0);
  EXPECT_NE(o.text.find("sf = Cast<to = 10>(s)"), std::string::npos) << o.text;
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
  auto o = expect_converts(ctx, kMasked, R"(
    g (float[2,4] q, float[2,4] k) => (float[2,2] p)
       <float16[2,2] mask ...>
    {
       q_fp16 = Cast<to = 10>(q)
       k_fp16 = Cast<to = 10>(k)
       kt = Transpose(k_fp16)
       s = MatMul(q_fp16, kt)
       a = Add(s, mask)
       p_fp16 = Softmax<axis = -1>(a)
       p = Cast<to = 1>(p_fp16)
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "masks rewritten"), 1);
  EXPECT_EQ(counter(o, "values clamped"), 0);
  // The mask holds fp16's safe lowest, and the fully masked row is finite in fp16.
  ir::Model m = converted(kMasked, PrecisionMode::kFp16);
  EXPECT_EQ(initializer_values(m, "mask"), (std::vector<float>{0, -32752, -32752, -32752}));
  auto out = exec::run_model(m, test::random_inputs(m));
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  for (int64_t i = 0; i < (*out)[0].numel(); ++i)
    EXPECT_TRUE(std::isfinite((*out)[0].as_double(i)));
}

// The same constant added without a softmax after it is no mask: it is clamped to fp16's range
// (counted), not moved to the safe lowest.
TEST(ConvertPrecision, MaskRuleDoesNotApplyWithoutSoftmax) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = expect_converts(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,2] s) => (float[2,2] p) <float[2,2] big = {0, -1e9, -1e9, -1e9}, float low = {-10}> {
      a = Add(s, big)
      p = Max(a, low)
    })",
                           R"(
    g (float[2,2] s) => (float[2,2] p)
       <float16[2,2] big ..., float16[] low ...>
    {
       s_fp16 = Cast<to = 10>(s)
       a = Add(s_fp16, big)
       p_fp16 = Max(a, low)
       p = Cast<to = 1>(p_fp16)
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "masks rewritten"), 0);
  EXPECT_EQ(counter(o, "values clamped"), 3);
  ir::Model m = converted(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,2] s) => (float[2,2] p) <float[2,2] big = {0, -1e9, -1e9, -1e9}, float low = {-10}> {
      a = Add(s, big)
      p = Max(a, low)
    })",
                          PrecisionMode::kFp16);
  EXPECT_EQ(initializer_values(m, "big"), (std::vector<float>{0, -65504, -65504, -65504}));
}

// fp16 -> fp32 -> fp16 is lossless and goes; fp32 -> fp16 -> fp32 rounds and stays.
TEST(ConvertPrecision, RemovesOnlyLosslessCastPairs) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = test::run_pipeline("convert-precision", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] f) => (float16[2,4] z, float[2,4] w) {
      x = Cast <to = 10> (f)
      y = Cast <to = 1> (x)
      h = Cast <to = 10> (y)
      z = Relu(h)
      w = Cast <to = 1> (x)
    })",
                              &ctx, test::kExact);
  ASSERT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_TRUE(o.changed);
  EXPECT_EQ(o.text, test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] f) => (float16[2,4] z, float[2,4] w) {
      x = Cast <to = 10> (f)
      z = Relu(x)
      w = Cast <to = 1> (x)
    })"));
  EXPECT_TRUE(o.numerically_checked) << o.why_unchecked;
  EXPECT_EQ(counter(o, "casts removed"), 2);
}

TEST(ConvertPrecision, LossyCastPairDoesNotApply) {
  auto ctx = context(PrecisionMode::kFp16);
  expect_not_converted(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] f) => (float[2,4] w) {
      a = Cast <to = 10> (f)
      b = Cast <to = 1> (a)
      w = Celu(b)
    })");
}

// Celu has only float in its schema: it stays fp32 between Casts.
TEST(ConvertPrecision, SchemaWithoutFp16KeepsTheNodeFp32) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = expect_converts(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) {
      a = Relu(x)
      b = Celu(a)
      y = Neg(b)
    })",
                           R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) {
      x_fp16 = Cast <to = 10> (x)
      a = Relu(x_fp16)
      a_fp32 = Cast <to = 1> (a)
      b = Celu(a_fp32)
      b_fp16 = Cast <to = 10> (b)
      y_fp16 = Neg(b_fp16)
      y = Cast <to = 1> (y_fp16)
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "kept fp32 (schema)"), 1);
}

// Relu has bfloat16 from opset 13: at 12 it stays fp32 in bf16, at 13 it converts.
TEST(ConvertPrecision, SchemaIsReadAtTheModelsOpset) {
  const std::string body = R"( g (float[2,4] x) => (float[2,4] y) {
      y = Relu(x)
    })";
  auto at12 = context(PrecisionMode::kBf16);
  auto kept = convert(R"(<ir_version: 7, opset_import: ["" : 12]>)" + body, at12);
  ASSERT_TRUE(kept.status.is_ok()) << kept.status.message();
  EXPECT_FALSE(kept.changed);
  EXPECT_EQ(counter(kept, "kept fp32 (schema)"), 1);
  auto at13 = context(PrecisionMode::kBf16);
  auto o = convert(R"(<ir_version: 7, opset_import: ["" : 13]>)" + body, at13, kBf16);
  ASSERT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_TRUE(o.changed);
  EXPECT_TRUE(o.numerically_checked) << o.why_unchecked;
  EXPECT_EQ(counter(o, "nodes converted"), 1);
  auto analysis =
      passes::analyze_precision(inferred(R"(<ir_version: 7, opset_import: ["" : 12]>)" + body), {});
  ASSERT_TRUE(analysis.is_ok());
  const passes::NodePrecision* relu = analysis->find("@y");
  ASSERT_NE(relu, nullptr);
  EXPECT_TRUE(relu->fp16);
  EXPECT_FALSE(relu->bf16);
  EXPECT_EQ(relu->rule, passes::PrecisionRule::kSchema);
  EXPECT_NE(relu->why.find("opset 12 has no bfloat16"), std::string::npos) << relu->why;
}

// An If's branches are converted inside, their boundary (the outer x, the If's result) fp32 as
// the outer scope sees it.
TEST(ConvertPrecision, SubgraphBodiesConvertConsistently) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = expect_converts(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2,4] x) => (float[2,4] y) {
      y = If(c) <
        then_branch = then_g () => (float[2,4] t) { r = Relu(x)  t = Neg(r) },
        else_branch = else_g () => (float[2,4] e) { e = Sigmoid(x) }>
    })",
                           R"(
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
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "kept fp32 (subgraph)"), 1);
}

TEST(ConvertPrecision, SubgraphWithoutFloatsDoesNotApply) {
  auto ctx = context(PrecisionMode::kFp16);
  expect_not_converted(ctx, R"(
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
    ir::Model m = inferred(text);
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
    ASSERT_NE(a->find("/layer/c"), nullptr);
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
  auto f = passes::analyze_precision(inferred(kIntegerChain), force);
  ASSERT_TRUE(f.is_ok());
  EXPECT_TRUE(f->allows("@r", ir::DType::kFloat16));
  EXPECT_FALSE(f->allows("@rr", ir::DType::kFloat16));
}

TEST(ConvertPrecision, KeepFp32IsNumericallyCheckedToo) {
  auto ctx = context(PrecisionMode::kFp16);
  ctx.mutable_options().precision.keep_fp32 = {"MatMul"};
  auto o = expect_converts(ctx, kMlp, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,4] y) <float[4,4] w = {1, 0.5, -1, 2, 0, 1, 1, -0.5, 2, 0, -1, 1, 0.25, 1, 0, 1}> {
      m = MatMul (x, w)
      m_fp16 = Cast <to = 10> (m)
      y_fp16 = Relu (m_fp16)
      y = Cast <to = 1> (y_fp16)
    })",
                           kFp16);
  EXPECT_EQ(counter(o, "kept fp32 (user)"), 1);
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
  EXPECT_EQ(ir::print_graph_text(m), dedent(R"(
    g (float[2,4] x) => (float[2,4] y)
       <float16[4,4] w ...>
    {
       x_fp16 = Cast<to = 10>(x)
       m = MatMul(x_fp16, w)
       m_fp32 = Cast<to = 1>(m)
       y = Relu(m_fp32)
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

// ---- bf16 for CNNs: the opset raised to 22 and FusedConv split
// (passes/precision/split_fused_conv.h)

constexpr const char* kFusedConvAt17 = R"(
  <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
  g (float[1,2,4,4] x) => (float[1,2,2,2] y)
    <float[2,2,1,1] w = {1, -0.5, 0.25, 2}, float[2] b = {0.5, -1}> {
    c = com.microsoft.FusedConv <activation = "Relu"> (x, w, b)
    y = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (c)
  })";

TEST(ConvertPrecision, Bf16RaisesTheOpsetAndSplitsFusedConv) {
  auto ctx = context(PrecisionMode::kBf16);
  auto o = expect_converts(ctx, kFusedConvAt17, R"(
    g (float[1,2,4,4] x) => (float[1,2,2,2] y)
       <bfloat16[2,2,1,1] w ..., bfloat16[2] b ...>
    {
       x_bf16 = Cast<to = 16>(x)
       c_conv = Conv(x_bf16, w, b)
       c = Relu(c_conv)
       y_bf16 = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(c)
       y = Cast<to = 1>(y_bf16)
    }
  )",
                           kBf16);
  EXPECT_EQ(counter(o, "opset raised to 22"), 1);
  EXPECT_EQ(counter(o, "fused convs split for bf16"), 1);
  EXPECT_EQ(counter(o, "kept fp32 (schema)"), 0);
}

// fp16 needs neither: FusedConv and MaxPool take float16 at opset 17.
TEST(ConvertPrecision, Fp16KeepsTheOpsetAndTheFusedConv) {
  auto ctx = context(PrecisionMode::kFp16);
  auto o = convert(kFusedConvAt17, ctx);
  ASSERT_TRUE(o.status.is_ok()) << o.status.message();
  EXPECT_EQ(counter(o, "opset raised to 22"), 0);
  EXPECT_EQ(counter(o, "fused convs split for bf16"), 0);
  EXPECT_NE(o.text.find("c = FusedConv<activation = \"Relu\">(x_fp16, w, b)"), std::string::npos)
      << o.text;
}

// A model the upgrade cannot cross (an If) stays at 17: its Conv has no bfloat16 there and stays
// fp32, and the record says why.
TEST(ConvertPrecision, Bf16KeepsTheOpsetWhereTheUpgradeIsBlocked) {
  ir::Model m = converted(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,4,4] x, bool k) => (float[1,2,4,4] y) <float[2,2,1,1] w = {1, -0.5, 0.25, 2}> {
      c = Conv(x, w)
      y = If (k) <then_branch = t () => (float[1,2,4,4] r) { r = Relu(c) },
                  else_branch = e () => (float[1,2,4,4] r) { r = Neg(c) }>
    })",
                          PrecisionMode::kBf16);
  EXPECT_EQ(m.graph->opset(""), 17);
  const auto record = nlohmann::json::parse(m.metadata("xopt.precision").value_or("{}"));
  EXPECT_NE(record["opset"]["kept"].get<std::string>().find("has a subgraph"), std::string::npos)
      << record.dump();
  for (const ir::Node* n : m.graph->nodes()) {
    if (n->op_type() == "Conv") {
      EXPECT_EQ(n->output(0)->dtype(), ir::DType::kFloat);
    }
  }
}

}  // namespace
}  // namespace xopt
