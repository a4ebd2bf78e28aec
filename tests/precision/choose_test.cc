// The `mixed` chooser on small graphs, each choice checked numerically against the fp32 run
// (precision_test_util.h simulates the conversion with Casts): under the default budget (1e-2
// relative RMS) chains of Conv and Gemm convert entirely and a node whose own error is over the
// budget stays fp32; values past 65504 stay out of float16, exact nodes go float16, a tighter
// budget keeps more in fp32, and the Cast cost keeps a lone node between fp32 neighbours in fp32.
#include "precision/choose.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "precision/local_error.h"
#include "tests/precision/precision_test_util.h"

namespace xopt {
namespace {

using ir::DType;

// "float[R,C] name = {v, v, ...}" for an initializer list in ONNX text.
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

struct Case {
  std::string text;
  ir::Model model;
  std::map<std::string, ir::Tensor> inputs;
  precision::Calibration cal;
  std::map<std::string, precision::LocalError, std::less<>> local;
  std::vector<ir::Tensor> ref;
};

Case make_case(const std::string& text, std::map<std::string, ir::Tensor> inputs) {
  Case c;
  c.text = text;
  c.model = test::parse(text);
  c.inputs = std::move(inputs);
  auto cal = precision::calibrate(c.model, {c.inputs});
  EXPECT_TRUE(cal.is_ok()) << cal.status().message();
  if (cal.is_ok()) c.cal = std::move(cal).value();
  c.local = precision::local_errors(*c.model.graph, c.cal);
  c.ref = test::run(c.model, c.inputs);
  return c;
}

precision::ChoiceReport choose(const Case& c, double max_error,
                               const precision::NodeRules& rules = {}) {
  precision::ChooseOptions o;
  o.max_error = max_error;
  return precision::choose_precision(*c.model.graph, c.cal, c.local, rules, o);
}

// Under the default options.
precision::ChoiceReport choose_default(const Case& c) {
  return precision::choose_precision(*c.model.graph, c.cal, c.local, {}, {});
}

// The converted model's worst output error (relative RMS, what --max-error bounds) against the
// fp32 run.
double measured(const Case& c, const passes::PrecisionChoice& choice) {
  ir::Model m = test::simulate_choice(c.text, choice, c.cal);
  return test::worst_rms(test::run(m, c.inputs), c.ref);
}

const precision::NodeDecision& decision(const precision::ChoiceReport& r, const std::string& key) {
  for (const auto& d : r.nodes)
    if (d.node == key) return d;
  ADD_FAILURE() << "no decision for " << key;
  static precision::NodeDecision none;
  return none;
}

std::vector<float> to_floats_of(const ir::Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

passes::PrecisionChoice all_in(const precision::ChoiceReport& r, DType t) {
  passes::PrecisionChoice c;
  for (const auto& d : r.nodes) c[d.node] = t;
  return c;
}

// x [8,32] -> MatMul w1 -> *5e4 (values pass 65504) -> MatMul w2 -> *1e-4 -> y.
std::string big_values_model() {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (float[8,32] x) => (float[8,32] y) <" +
         init("w1", test::ramp({32, 32}, 0.3f, 2)) + ", " +
         init("w2", test::ramp({32, 32}, 0.3f, 3)) + ", " +
         init("s", ir::Tensor::of<float>({1}, {5e4f})) + ", " +
         init("t", ir::Tensor::of<float>({1}, {1e-4f})) +
         "> {\n"
         "  a = MatMul(x, w1)\n"
         "  b = Mul(a, s)\n"
         "  c = MatMul(b, w2)\n"
         "  y = Mul(c, t)\n"
         "}\n";
}

TEST(ChoosePrecision, ValuesPastFloat16MaxStayOutOfFloat16) {
  Case c = make_case(big_values_model(), {{"x", test::ramp({8, 32}, 1.0f, 1)}});
  ASSERT_GT(c.cal.ranges.at("b").max_abs, 65504.0);
  ASSERT_LT(c.cal.ranges.at("a").max_abs * 2, 65504.0);
  const precision::ChoiceReport r = choose(c, 2e-2);
  // The nodes that read or write b or c (past 65504) are bfloat16 or fp32, never float16.
  for (const char* k : {"@b", "@c", "@y"}) {
    const auto& d = decision(r, k);
    EXPECT_NE(d.dtype, DType::kFloat16) << k << ": " << d.reason;
    EXPECT_GT(d.max_abs, 65504.0) << k;
    if (d.dtype == DType::kBFloat16) {
      EXPECT_NE(d.reason.find("not float16"), std::string::npos) << d.reason;
    }
    EXPECT_LT(d.headroom, 1.0e34) << k;  // headroom of bfloat16/fp32 over 1e5
  }
  EXPECT_TRUE(std::isinf(decision(r, "@b").local.fp16));
  EXPECT_GT(r.count(DType::kBFloat16), 0);
  // Checked against the fp32 run: the choice is finite and within the budget; every node in
  // float16 is not.
  const double err = measured(c, precision::to_choice(r));
  EXPECT_LE(err, 2e-2);
  EXPECT_TRUE(std::isinf(measured(c, all_in(r, DType::kFloat16))));
}

// Underflow is judged on activations only. w's entries are all below float16's smallest normal
// (a fused bias or a small filter looks like this), but h = x * w is of normal size, so the
// MatMul may take float16; y = h * 1e-6 is itself mostly subnormal in float16, so the Mul may not.
TEST(ChoosePrecision, SubnormalWeightsDoNotKeepANodeOutOfFloat16) {
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[4,32] x) => (float[4,32] y) <" +
      init("w", test::ramp({32, 32}, 4e-5f, 6)) + ", " +
      init("s", ir::Tensor::of<float>({1}, {1e-6f})) +
      "> {\n  h = MatMul(x, w)\n  y = Mul(h, s)\n}\n";
  Case c = make_case(text, {{"x", test::ramp({4, 32}, 100.0f, 7)}});
  ASSERT_GT(c.cal.ranges.at("w").share(c.cal.ranges.at("w").fp16_subnormal), 0.9);
  ASSERT_LT(c.cal.ranges.at("h").share(c.cal.ranges.at("h").fp16_subnormal), 0.01);
  ASSERT_GT(c.cal.ranges.at("y").share(c.cal.ranges.at("y").fp16_subnormal), 0.5);
  const precision::ChoiceReport r = choose(c, 2e-2);
  const auto& mm = decision(r, "@h");
  EXPECT_EQ(mm.fp16_subnormal_share, 0.0) << "w is a constant";
  EXPECT_EQ(mm.reason.find("smallest normal"), std::string::npos) << mm.reason;
  EXPECT_NE(mm.dtype, DType::kFloat) << mm.reason;
  const auto& mul = decision(r, "@y");
  EXPECT_NE(mul.dtype, DType::kFloat16) << mul.reason;
  EXPECT_NE(mul.reason.find("below float16's smallest normal"), std::string::npos) << mul.reason;
  EXPECT_LE(measured(c, precision::to_choice(r)), 2e-2);
}

// x [4,32] of multiples of 1/8 times w of multiples of 1/8: every product and sum is exact in
// float16, so the MatMul has no local error.
TEST(ChoosePrecision, NodeWithNoLocalErrorGoesFloat16) {
  std::vector<float> xv(4 * 32), wv(32 * 32);
  for (size_t i = 0; i < xv.size(); ++i)
    xv[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 8;
  for (size_t i = 0; i < wv.size(); ++i)
    wv[i] = static_cast<float>(static_cast<int>(i % 5) - 2) / 8;
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[4,32] x) => (float[4,32] y) <" +
      init("w", ir::Tensor::of<float>({32, 32}, wv)) + "> {\n  y = MatMul(x, w)\n}\n";
  Case c = make_case(text, {{"x", ir::Tensor::of<float>({4, 32}, xv)}});
  const precision::ChoiceReport r = choose(c, 1e-6);
  const auto& d = decision(r, "@y");
  EXPECT_EQ(d.local.fp16, 0.0);
  EXPECT_EQ(d.dtype, DType::kFloat16) << d.reason;
  EXPECT_EQ(d.kind, "chosen");
  EXPECT_EQ(measured(c, precision::to_choice(r)), 0.0);
  EXPECT_LT(r.bytes_chosen, r.bytes_fp32);
}

// Four MatMuls in a chain with varied weights: each has a float16 local error near 2^-11.
std::string chain_model() {
  std::string s =
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[4,32] x) => (float[4,32] y) <";
  for (int k = 0; k < 4; ++k)
    s += (k ? ", " : "") + init("w" + std::to_string(k), test::ramp({32, 32}, 0.35f, 10 + k));
  s += "> {\n  h0 = MatMul(x, w0)\n  h1 = MatMul(h0, w1)\n  h2 = MatMul(h1, w2)\n"
       "  y = MatMul(h2, w3)\n}\n";
  return s;
}

TEST(ChoosePrecision, TighterBudgetKeepsMoreInFp32) {
  Case c = make_case(chain_model(), {{"x", test::ramp({4, 32}, 1.0f, 4)}});
  // Budgets around the nodes' own float16 errors: over their root sum of squares (every node
  // fits), over the largest alone (some fit), under the smallest (none does).
  double sum2 = 0.0, largest = 0.0, smallest = 1.0;
  for (const char* k : {"@h0", "@h1", "@h2", "@y"}) {
    const double e = c.local.at(k).fp16;
    ASSERT_GT(e, 0.0) << k;
    ASSERT_LT(e, 1e-3) << k << ": float16 rounding of a 32-term product is near 2^-11";
    sum2 += e * e;
    largest = std::max(largest, e);
    smallest = std::min(smallest, e);
  }
  ASSERT_LT(largest * 1.01, std::sqrt(sum2));
  int last_fp32 = -1;
  for (double budget : {1e-1, std::sqrt(sum2) * 1.01, largest * 1.01, smallest * 0.5, 1e-6}) {
    const precision::ChoiceReport r = choose(c, budget);
    const int fp32 = r.count(DType::kFloat);
    EXPECT_GE(fp32, last_fp32) << "max-error " << budget;
    last_fp32 = fp32;
    // The estimate is within the budget, and so is the error measured against the fp32 run.
    EXPECT_LE(r.output_estimate.at("y"), budget * (1 + 1e-9));
    const double err = measured(c, precision::to_choice(r));
    EXPECT_LE(err, budget) << "max-error " << budget << ", " << fp32 << " node(s) in fp32";
  }
  EXPECT_EQ(choose(c, std::sqrt(sum2) * 1.01).count(DType::kFloat), 0);
  EXPECT_GT(choose(c, largest * 1.01).count(DType::kFloat), 0);
  EXPECT_LT(choose(c, largest * 1.01).count(DType::kFloat), 4);
  EXPECT_EQ(choose(c, smallest * 0.5).count(DType::kFloat), 4);
  EXPECT_EQ(decision(choose(c, smallest * 0.5), "@h0").kind, "local-error");
}

// Eight 3x3 Convs with Relus, then Flatten and two Gemms: what a user choosing `mixed` expects in
// low precision. Under the default budget every node takes float16, and the result is measured
// within the budget (cosine >= 0.99995 follows).
std::string conv_gemm_chain_model() {
  std::string s =
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[1,4,8,8] x) => (float[1,10] y) <";
  for (int k = 0; k < 8; ++k) {
    const std::string i = std::to_string(k);
    s += init("w" + i, test::ramp({4, 4, 3, 3}, 0.4f, 30 + k)) + ", " +
         init("b" + i, test::ramp({4}, 0.1f, 40 + k)) + ", ";
  }
  s += init("g0", test::ramp({32, 256}, 0.15f, 50)) + ", " +
       init("c0", test::ramp({32}, 0.1f, 51)) + ", " + init("g1", test::ramp({10, 32}, 0.4f, 52)) +
       ", " + init("c1", test::ramp({10}, 0.1f, 53)) + "> {\n";
  std::string prev = "x";
  for (int k = 0; k < 8; ++k) {
    const std::string i = std::to_string(k);
    s += "  v" + i + " = Conv <pads = [1, 1, 1, 1]> (" + prev + ", w" + i + ", b" + i + ")\n";
    s += "  r" + i + " = Relu(v" + i + ")\n";
    prev = "r" + i;
  }
  s += "  f = Flatten(" + prev +
       ")\n"
       "  h = Gemm <transB = 1> (f, g0, c0)\n"
       "  hr = Relu(h)\n"
       "  y = Gemm <transB = 1> (hr, g1, c1)\n}\n";
  return s;
}

TEST(ChoosePrecision, DefaultBudgetConvertsAChainOfConvAndGemm) {
  Case c = make_case(conv_gemm_chain_model(), {{"x", test::ramp({1, 4, 8, 8}, 1.0f, 29)}});
  const precision::ChoiceReport r = choose_default(c);
  EXPECT_EQ(r.max_error, 1e-2);
  std::string table;
  for (const auto& d : r.nodes)
    table +=
        d.node + " " + std::string(ir::dtype_name(d.dtype)) + " " + d.kind + ": " + d.reason + "\n";
  ASSERT_EQ(r.nodes.size(), 20u);
  EXPECT_EQ(r.count(DType::kFloat16), 20) << table;
  EXPECT_LE(r.output_estimate.at("y"), 1e-2);
  const passes::PrecisionChoice choice = precision::to_choice(r);
  EXPECT_LE(measured(c, choice), 1e-2);
  ir::Model m = test::simulate_choice(c.text, choice, c.cal);
  const exec::TensorDiff d = exec::compare_tensors("y", test::run(m, c.inputs).at(0), c.ref.at(0));
  EXPECT_GE(d.cosine, 0.99995);
  EXPECT_LT(r.bytes_chosen, 0.6 * r.bytes_fp32);
}

// a = x - 1000 with x within 0.3 of 1000: float16 stores x on steps of 0.5 there, so a's own
// error in float16 (and bfloat16) is of the order of a itself, far over the default budget. The
// Sub stays fp32, the MatMul after it (on values of 0.3, exact enough) takes float16.
TEST(ChoosePrecision, NodeWhoseOwnErrorIsOverTheBudgetStaysFp32) {
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[4,32] x) => (float[4,32] y) <" +
      init("w", test::ramp({32, 32}, 0.3f, 60)) + ", " +
      init("k", ir::Tensor::of<float>({1}, {1000.0f})) +
      "> {\n  a = Sub(x, k)\n  y = MatMul(a, w)\n}\n";
  std::vector<float> xv = to_floats_of(test::ramp({4, 32}, 0.3f, 61));
  for (float& v : xv) v += 1000.0f;
  Case c = make_case(text, {{"x", ir::Tensor::of<float>({4, 32}, xv)}});
  const precision::ChoiceReport r = choose_default(c);
  const auto& sub = decision(r, "@a");
  EXPECT_GT(sub.local.own_fp16, 1e-1);
  EXPECT_EQ(sub.dtype, DType::kFloat) << sub.reason;
  EXPECT_EQ(sub.kind, "local-error") << sub.reason;
  EXPECT_NE(sub.reason.find("over --max-error 0.01"), std::string::npos) << sub.reason;
  const auto& mm = decision(r, "@y");
  EXPECT_EQ(mm.dtype, DType::kFloat16) << mm.reason;
  EXPECT_LE(measured(c, precision::to_choice(r)), 1e-2);
  EXPECT_GT(measured(c, all_in(r, DType::kFloat16)), 1e-1);
}

// MatMul -> Relu -> MatMul where the rules keep both MatMuls in fp32: the Relu would need a Cast
// in and a Cast out, which move more bytes than its own conversion saves.
std::string lone_node_model() {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (float[4,32] x) => (float[4,32] y) <" +
         init("w1", test::ramp({32, 32}, 0.3f, 5)) + ", " +
         init("w2", test::ramp({32, 32}, 0.3f, 6)) +
         "> {\n  a = MatMul(x, w1)\n  r = Relu(a)\n  y = MatMul(r, w2)\n}\n";
}

TEST(ChoosePrecision, CastCostKeepsALoneNodeBetweenFp32NeighboursInFp32) {
  Case c = make_case(lone_node_model(), {{"x", test::ramp({4, 32}, 1.0f, 7)}});
  precision::NodeRules rules;
  rules["@a"] = {false, false, false, false, "schema: test keeps it"};
  rules["@y"] = {false, false, false, false, "schema: test keeps it"};
  const precision::ChoiceReport kept = choose(c, 1e-2, rules);
  const auto& relu = decision(kept, "@r");
  EXPECT_LT(relu.local.fp16, 1e-3);  // accurate enough: only the Casts keep it in fp32
  EXPECT_EQ(relu.dtype, DType::kFloat);
  EXPECT_EQ(relu.kind, "cast-cost") << relu.reason;
  EXPECT_EQ(decision(kept, "@a").kind, "rule");
  EXPECT_EQ(kept.casts, 0);
  EXPECT_EQ(measured(c, precision::to_choice(kept)), 0.0);
  // Without the rules the whole chain converts (one Cast in, one out) and stays in the budget.
  const precision::ChoiceReport free = choose(c, 1e-2);
  EXPECT_EQ(decision(free, "@r").dtype, DType::kFloat16) << decision(free, "@r").reason;
  EXPECT_EQ(free.count(DType::kFloat), 0);
  EXPECT_EQ(free.casts, 2);
  EXPECT_LE(measured(c, precision::to_choice(free)), 1e-2);
}

TEST(ChoosePrecision, UserKeepAndForceWin) {
  Case c = make_case(chain_model(), {{"x", test::ramp({4, 32}, 1.0f, 4)}});
  precision::NodeRules rules;
  rules["@h1"].user_keep_fp32 = true;
  rules["@h2"].user_force_lowp = true;
  const precision::ChoiceReport r = choose(c, 1e-5, rules);
  EXPECT_EQ(decision(r, "@h1").dtype, DType::kFloat);
  EXPECT_EQ(decision(r, "@h1").kind, "user");
  EXPECT_EQ(decision(r, "@h2").dtype, DType::kFloat16);  // over the budget: the user's call
  EXPECT_EQ(decision(r, "@h2").kind, "user");
}

TEST(ChoosePrecision, JsonNamesEveryNodeAndItsReason) {
  Case c = make_case(big_values_model(), {{"x", test::ramp({8, 32}, 1.0f, 1)}});
  const nlohmann::json j = precision::choice_json(choose(c, 2e-2));
  EXPECT_EQ(j["format"], "xopt.precision_choice");
  ASSERT_EQ(j["nodes"].size(), 4u);
  for (const auto& n : j["nodes"]) {
    EXPECT_FALSE(n["reason"].get<std::string>().empty()) << n.dump();
    EXPECT_TRUE(n.contains("headroom"));
  }
  EXPECT_EQ(j["nodes"][1]["local_error_fp16"], nullptr);  // b overflows float16: inf -> null
}

}  // namespace
}  // namespace xopt
