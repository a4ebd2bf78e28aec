// The model every naive converter breaks: a residual stream whose values pass 65504 and a softmax
// over scores with a -1e9 additive mask. Every node in float16 gives inf/NaN; `mixed` keeps the
// nodes that need the range out of float16 and its outputs stay finite and within the default
// budget (relative RMS error 1e-2, precision/choose.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "passes/pass_manager.h"
#include "precision/choose.h"
#include "precision/chooser.h"
#include "precision/local_error.h"
#include "tests/precision/precision_test_util.h"

namespace xopt {
namespace {

using ir::DType;

std::string init(const std::string& name, const ir::Tensor& t) {
  std::string s = "float[";
  for (size_t i = 0; i < t.dims().size(); ++i) s += (i ? "," : "") + std::to_string(t.dims()[i]);
  s += "] " + name + " = {";
  for (int64_t i = 0; i < t.numel(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", t.data<float>()[i]);
    s += (i ? ", " : "") + std::string(buf);
  }
  return s + "}";
}

}  // namespace

// Shared with the pass half of the test (convert_precision_overflow_test.cc).
std::string overflow_model_text() {
  std::vector<float> mask(16);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) mask[i * 4 + j] = j > i ? -1e9f : 0.0f;  // causal
  std::vector<float> ones(64, 1.0f), zeros(64, 0.0f);
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (float[4,64] x) => (float[4,64] y) <" +
         init("w", test::ramp({64, 64}, 0.15f, 21)) + ", " +
         init("stream", test::ramp({4, 64}, 1.5e5f, 22)) + ", " +
         init("gamma", ir::Tensor::of<float>({64}, ones)) + ", " +
         init("beta", ir::Tensor::of<float>({64}, zeros)) + ", " +
         init("wk", test::ramp({64, 64}, 0.1f, 23)) + ", " +
         init("wo", test::ramp({64, 64}, 0.15f, 25)) + ", " +
         init("mask", ir::Tensor::of<float>({4, 4}, mask)) +
         "> {\n"
         "  a = MatMul(x, w)\n"
         "  r = Add(a, stream)\n"
         "  n = LayerNormalization <axis = -1> (r, gamma, beta)\n"
         "  k = MatMul(n, wk)\n"
         "  kt = Transpose <perm = [1, 0]> (k)\n"
         "  s = MatMul(n, kt)\n"
         "  m = Add(s, mask)\n"
         "  p = Softmax <axis = -1> (m)\n"
         "  o = MatMul(p, n)\n"
         "  y = MatMul(o, wo)\n"
         "}\n";
}

namespace {

TEST(OverflowModel, EveryNodeInFloat16OverflowsMixedStaysFiniteAndAccurate) {
  const std::string text = overflow_model_text();
  ir::Model model = test::parse(text);
  const std::map<std::string, ir::Tensor> inputs = {{"x", test::ramp({4, 64}, 1.0f, 24)}};
  auto cal = precision::calibrate(model, {inputs});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  ASSERT_GT(cal->ranges.at("r").max_abs, 65504.0);
  ASSERT_GE(cal->ranges.at("m").max_abs, 1e9);
  const auto ref = test::run(model, inputs);
  const auto local = precision::local_errors(*model.graph, *cal);

  const precision::ChooseOptions o;  // the default budget
  ASSERT_EQ(o.max_error, 1e-2);
  const precision::ChoiceReport r = precision::choose_precision(*model.graph, *cal, local, {}, o);

  // Every node in float16 (what --precision fp16 --no-auto does): inf/NaN at the output.
  passes::PrecisionChoice all16;
  for (const auto& d : r.nodes) all16[d.node] = DType::kFloat16;
  const auto naive = test::run(test::simulate_choice(text, all16, *cal), inputs);
  ASSERT_EQ(naive.size(), 1u);
  exec::TensorDiff nd = exec::compare_tensors("y", naive[0], ref[0]);
  EXPECT_GT(nd.accuracy.nan + nd.accuracy.inf, 0) << "the naive conversion should overflow";

  // mixed: the residual Add and the masked scores stay out of float16; the output is finite and
  // within the budget of the fp32 run.
  for (const auto& d : r.nodes) {
    if (d.node == "@r" || d.node == "@m" || d.node == "@p" || d.node == "@n") {
      EXPECT_NE(d.dtype, DType::kFloat16) << d.node << ": " << d.reason;
    }
  }
  std::string table;
  for (const auto& d : r.nodes)
    table +=
        d.node + " " + std::string(ir::dtype_name(d.dtype)) + " " + d.kind + ": " + d.reason + "\n";
  EXPECT_GT(r.count(DType::kFloat16) + r.count(DType::kBFloat16), 0) << table;
  const auto mixed = test::run(test::simulate_choice(text, precision::to_choice(r), *cal), inputs);
  ASSERT_EQ(mixed.size(), 1u);
  exec::TensorDiff md = exec::compare_tensors("y", mixed[0], ref[0]);
  EXPECT_EQ(md.accuracy.nan + md.accuracy.inf, 0);
  EXPECT_LE(test::worst_rms(mixed, ref), o.max_error) << table;
  EXPECT_GE(md.cosine, 0.999);
}

// The same model through convert-precision itself: `--precision fp16 --no-auto` converts every
// node and the output is inf/NaN; `--precision mixed` with the chooser (seeded random calibration
// inputs) is finite and within the default --max-error of the fp32 run.
ir::Model through_pass(const std::string& text, passes::PrecisionMode mode, bool auto_rules,
                       std::shared_ptr<precision::ChoiceReport> report = nullptr) {
  ir::Model m = test::parse(text);
  passes::PassManager pm;
  EXPECT_TRUE(pm.add_pipeline("convert-precision").is_ok());
  passes::PassOptions o;
  o.precision.mode = mode;
  o.precision.auto_rules = auto_rules;
  precision::ChooserConfig config;
  config.report = std::move(report);
  o.precision.choose = precision::make_chooser(config);
  passes::PassContext ctx(o);
  Status st = pm.run(m, ctx);
  EXPECT_TRUE(st.is_ok()) << st.message();
  return m;
}

TEST(OverflowModel, ThroughThePassNaiveFp16BreaksMixedDoesNot) {
  const std::string text = overflow_model_text();
  const std::map<std::string, ir::Tensor> inputs = {{"x", test::ramp({4, 64}, 1.0f, 24)}};
  const auto ref = test::run(test::parse(text), inputs);

  const ir::Model naive = through_pass(text, passes::PrecisionMode::kFp16, false);
  const auto bad = test::run(naive, inputs);
  ASSERT_EQ(bad.size(), 1u);
  const exec::TensorDiff nd = exec::compare_tensors("y", bad[0], ref[0]);
  EXPECT_GT(nd.accuracy.nan + nd.accuracy.inf, 0) << "fp16 --no-auto should overflow";

  auto report = std::make_shared<precision::ChoiceReport>();
  const ir::Model mixed = through_pass(text, passes::PrecisionMode::kMixed, true, report);
  ASSERT_FALSE(report->nodes.empty()) << "the chooser did not run";
  std::string table;
  for (const auto& d : report->nodes)
    table +=
        d.node + " " + std::string(ir::dtype_name(d.dtype)) + " " + d.kind + ": " + d.reason + "\n";
  EXPECT_GT(report->count(DType::kFloat16) + report->count(DType::kBFloat16), 0) << table;
  const auto good = test::run(mixed, inputs);
  ASSERT_EQ(good.size(), 1u);
  const exec::TensorDiff md = exec::compare_tensors("y", good[0], ref[0]);
  EXPECT_EQ(md.accuracy.nan + md.accuracy.inf, 0) << table;
  EXPECT_LE(test::worst_rms(good, ref), passes::PrecisionOptions{}.max_error) << table;
  EXPECT_GE(md.cosine, 0.999);
  EXPECT_TRUE(mixed.metadata("xopt.precision").has_value());
}

}  // namespace
}  // namespace xopt
