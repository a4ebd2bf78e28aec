// Control flow (If, Loop, Scan): shape inference, the verifier, the CPU executor (references from
// onnxruntime 1.32: tests/control_flow/gen_references.py prints them), the passes that look inside
// subgraphs, inline-constant-if, and memory planning around a subgraph.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "ir/subgraph.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "onnx/checker.h"
#include "passes/pass_manager.h"
#include "planner/memory_plan.h"
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

// The same models as gen_references.py.
constexpr const char* kIfOuter = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) <float[2] w = {10, 20}> {
  t = Mul(x, x)
  y = If (c) <then_branch = then_g () => (float[2] a) {
      a = Add(t, w)
    }, else_branch = else_g () => (float[2] b) {
      k = Constant <value = float[2] {1, 2}> ()
      b = Sub(x, k)
    }>
})";

constexpr const char* kIfNested = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c1, bool c2, float[2] x) => (float[2] y) <float[2] w = {10, 20}> {
  y = If (c1) <then_branch = then_g () => (float[2] a) {
      u = Mul(x, w)
      a = If (c2) <then_branch = tt () => (float[2] p) {
          p = Add(u, x)
        }, else_branch = te () => (float[2] q) {
          q = Sub(u, w)
        }>
    }, else_branch = else_g () => (float[2] b) {
      b = Neg(x)
    }>
})";

constexpr const char* kLoopFull = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, bool c0, float[2] x) => (float[2] s, int64 it, float[?,2] ys)
    <float[2] w = {1, 10}, int64 zero = {0}> {
  s, it, ys = Loop (M, c0, x, zero) <body = body (int64 i, bool cin, float[2] acc, int64 cnt)
      => (bool cout, float[2] acc2, int64 cnt2, float[2] y) {
      one = Constant <value = int64 {1}> ()
      cnt2 = Add(cnt, one)
      acc2 = Add(acc, w)
      fi = Cast <to = 1> (i)
      y = Mul(acc2, fi)
      lim = Constant <value = int64 {3}> ()
      cout = Less(i, lim)
    }>
})";

constexpr const char* kLoopNoM = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] s) <float[2] w = {1, 10}, bool t = {1}> {
  s = Loop (omitted, t, x) <body = body (int64 i, bool cin, float[2] acc) => (bool cout, float[2] acc2) {
      acc2 = Add(acc, w)
      five = Constant <value = int64 {5}> ()
      cout = Less(i, five)
    }>
})";

constexpr const char* kLoopNoCond = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] x) => (float[2] s, float[?,2] ys) {
  s, ys = Loop (M, omitted, x) <body = body (int64 i, bool cin, float[2] acc)
      => (bool cout, float[2] acc2, float[2] y) {
      acc2 = Mul(acc, x)
      y = Identity(acc)
      cout = Identity(cin)
    }>
})";

constexpr const char* kScan9 = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] s0, float[2,3] a, float[3,2] b) => (float[2] s, float[2,3] y1, float[3,2] y2) {
  s, y1, y2 = Scan (s0, a, b) <num_scan_inputs = 2, scan_input_axes = [1, 0],
      scan_input_directions = [1, 0], scan_output_axes = [1, -2], scan_output_directions = [0, 1],
      body = body (float[2] st, float[2] ai, float[2] bi) => (float[2] st2, float[2] o1, float[2] o2) {
      t = Add(st, ai)
      st2 = Mul(t, bi)
      o1 = Identity(t)
      o2 = Sub(st2, ai)
    }>
})";

constexpr const char* kScan8 = R"(
<ir_version: 3, opset_import: ["" : 8]>
g (int64[2] lens, float[2,2] s0, float[2,3,2] x) => (float[2,2] s, float[2,3,2] y) {
  s, y = Scan (lens, s0, x) <num_scan_inputs = 1, directions = [1],
      body = body (float[2] st, float[2] xi) => (float[2] st2, float[2] o) {
      st2 = Add(st, xi)
      o = Mul(st2, xi)
    }>
})";

// libonnx 1.12's parser has no syntax for an omitted input: the models name it `omitted`, and the
// input is dropped after parsing.
ir::Model parse(const char* text) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  for (ir::Node* n : m->graph->nodes())
    for (size_t i = 0; i < n->num_inputs(); ++i)
      if (n->input(i) != nullptr && n->input(i)->name() == "omitted") n->set_input(i, nullptr);
  return std::move(m).value();
}

ir::Tensor floats(std::vector<int64_t> dims, std::vector<float> v) {
  return ir::Tensor::of<float>(std::move(dims), v);
}

// Runs the model and returns each output as (dims, values as doubles).
std::vector<std::pair<std::vector<int64_t>, std::vector<double>>> run(
    const ir::Model& m, const std::map<std::string, ir::Tensor>& in,
    const exec::RunOptions& options = {}) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<double>>> out;
  auto r = exec::run_model(m, in, options);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return out;
  for (const ir::Tensor& t : *r) {
    std::vector<double> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.as_double(i));
    out.emplace_back(t.dims(), v);
  }
  return out;
}

using Dims = std::vector<int64_t>;
using Values = std::vector<double>;

TEST(ControlFlowRun, IfReadsOuterInitializerActivationAndBranchConstant) {
  ir::Model m = parse(kIfOuter);
  auto t = run(m, {{"c", ir::Tensor::scalar<bool>(true)}, {"x", floats({2}, {1, 3})}});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].second, (Values{11, 29}));
  auto e = run(m, {{"c", ir::Tensor::scalar<bool>(false)}, {"x", floats({2}, {1, 3})}});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].second, (Values{0, 1}));
}

TEST(ControlFlowRun, NestedIfReadsValuesOfEveryEnclosingScope) {
  ir::Model m = parse(kIfNested);
  auto go = [&](bool a, bool b) {
    auto r = run(m, {{"c1", ir::Tensor::scalar<bool>(a)},
                     {"c2", ir::Tensor::scalar<bool>(b)},
                     {"x", floats({2}, {1, 3})}});
    return r.empty() ? Values{} : r[0].second;
  };
  EXPECT_EQ(go(true, true), (Values{11, 63}));
  EXPECT_EQ(go(true, false), (Values{0, 40}));
  EXPECT_EQ(go(false, true), (Values{-1, -3}));
}

TEST(ControlFlowRun, LoopWithTripCountAndConditionCarriesStateAndStacksScanOutputs) {
  ir::Model m = parse(kLoopFull);
  auto go = [&](int64_t trips, bool c0) {
    return run(m, {{"M", ir::Tensor::scalar<int64_t>(trips)},
                   {"c0", ir::Tensor::scalar<bool>(c0)},
                   {"x", floats({2}, {0.5f, 2})}});
  };
  auto a = go(10, true);  // the body's condition stops it after 4 iterations
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].second, (Values{4.5, 42}));
  EXPECT_EQ(a[1].second, (Values{4}));
  EXPECT_EQ(a[2].first, (Dims{4, 2}));
  EXPECT_EQ(a[2].second, (Values{0, 0, 2.5, 22, 7, 64, 13.5, 126}));
  auto b = go(2, true);  // M stops it first
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].second, (Values{2.5, 22}));
  EXPECT_EQ(b[2].first, (Dims{2, 2}));
  auto c = go(10, false);  // never runs: carried values pass through, scan outputs are empty
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].second, (Values{0.5, 2}));
  EXPECT_EQ(c[1].second, (Values{0}));
  EXPECT_EQ(c[2].first, (Dims{0, 2}));
}

TEST(ControlFlowRun, LoopWithoutTripCountOrWithoutCondition) {
  auto a = run(parse(kLoopNoM), {{"x", floats({2}, {0.5f, 2})}});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].second, (Values{6.5, 62}));
  auto b =
      run(parse(kLoopNoCond), {{"M", ir::Tensor::scalar<int64_t>(3)}, {"x", floats({2}, {2, 3})}});
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].second, (Values{16, 81}));
  EXPECT_EQ(b[1].first, (Dims{3, 2}));
  EXPECT_EQ(b[1].second, (Values{2, 3, 4, 9, 8, 27}));
}

TEST(ControlFlowRun, Scan9AxesAndDirections) {
  auto r = run(parse(kScan9), {{"s0", floats({2}, {1, 2})},
                               {"a", floats({2, 3}, {0, 1, 2, 3, 4, 5})},
                               {"b", floats({3, 2}, {-1, -0.5f, 0, 0.5f, 1, 1.5f})}});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].second, (Values{0, 4.875}));
  EXPECT_EQ(r[1].first, (Dims{2, 3}));
  EXPECT_EQ(r[1].second, (Values{3, -2, 0, 7, 0.5, 3.25}));
  EXPECT_EQ(r[2].first, (Dims{3, 2}));
  EXPECT_EQ(r[2].second, (Values{0, 1.875, -1, -3.75, -5, -8.5}));
}

TEST(ControlFlowRun, Scan8BatchSequenceLensAndDirections) {
  auto r = run(parse(kScan8), {{"lens", ir::Tensor::of<int64_t>({2}, {3, 2})},
                               {"s0", floats({2, 2}, {1, 2, 3, 4})},
                               {"x", floats({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].second, (Values{7, 11, 17, 20}));
  EXPECT_EQ(r[1].first, (Dims{2, 3, 2}));
  EXPECT_EQ(r[1].second, (Values{20, 35, 14, 30, 0, 11, 88, 117, 102, 140, 0, 0}));
}

TEST(ControlFlowRun, ErrorsNameTheNodeAndTheSubgraph) {
  ir::Model m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) {
  y = If (c) <then_branch = then_g () => (float[2] a) {
      a = Reshape(x, x)
    }, else_branch = else_g () => (float[2] b) {
      b = Neg(x)
    }>
})");
  auto r = exec::run_model(m, {{"c", ir::Tensor::scalar<bool>(true)}, {"x", floats({2}, {1, 2})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("(If)"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("then_g"), std::string::npos) << r.status().message();
}

TEST(ControlFlowInference, OutputTypesComeFromTheSubgraphs) {
  ir::Model m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2,3] x) => (y, z) {
  y, z = If (c) <then_branch = then_g () => (a, b) {
      a = Relu(x)
      b = Shape(x)
    }, else_branch = else_g () => (p, q) {
      p = Neg(x)
      q = Shape(x)
    }>
})");
  ASSERT_TRUE(ir::infer_shapes(*m.graph).is_ok());
  const ir::Value* y = m.graph->find_value("y");
  EXPECT_EQ(y->dtype(), ir::DType::kFloat);
  EXPECT_EQ(y->shape().to_string(), "[2,3]");
  EXPECT_EQ(m.graph->find_value("z")->dtype(), ir::DType::kInt64);

  ir::Model loop = parse(kLoopFull);
  ASSERT_TRUE(ir::infer_shapes(*loop.graph).is_ok());
  EXPECT_EQ(loop.graph->find_value("s")->shape().to_string(), "[2]");
  EXPECT_EQ(loop.graph->find_value("ys")->shape().rank(), 2u);
  EXPECT_EQ(loop.graph->find_value("ys")->shape()[1].value, 2);

  ir::Model scan = parse(kScan9);
  ASSERT_TRUE(ir::infer_shapes(*scan.graph).is_ok());
  EXPECT_EQ(scan.graph->find_value("y1")->shape().to_string(), "[2,3]");
  EXPECT_EQ(scan.graph->find_value("y2")->shape().to_string(), "[3,2]");
  ir::Model scan8 = parse(kScan8);
  ASSERT_TRUE(ir::infer_shapes(*scan8.graph).is_ok());
  EXPECT_EQ(scan8.graph->find_value("y")->shape().to_string(), "[2,3,2]");
}

TEST(ControlFlowInference, BranchesThatDisagreeAreRefused) {
  ir::Model m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (y) {
  y = If (c) <then_branch = then_g () => (a) {
      a = Relu(x)
    }, else_branch = else_g () => (b) {
      b = Shape(x)
    }>
})");
  Status s = ir::infer_shapes(*m.graph);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("else_branch"), std::string::npos) << s.message();
}

TEST(ControlFlowVerifier, ChecksInsideSubgraphs) {
  ir::Model ok = parse(kIfNested);
  EXPECT_TRUE(ir::verify(*ok.graph).is_ok());
  ir::Model bad = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) {
  y = If (c) <then_branch = then_g () => (float[2] a) {
      a = Add(x, later)
      later = Neg(x)
    }, else_branch = else_g () => (float[2] b) {
      b = Neg(x)
    }>
})");
  // Only the branch itself shows it: `later` is read before the branch's node writes it.
  Status s = ir::verify(*bad.graph);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("'later' before"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("(If): in then_branch"), std::string::npos) << s.message();
  ir::Model undefined = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) {
  y = If (c) <then_branch = then_g () => (float[2] a) {
      a = Add(x, nowhere)
    }, else_branch = else_g () => (float[2] b) {
      b = Neg(x)
    }>
})");
  s = ir::verify(*undefined.graph);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("reads 'nowhere'"), std::string::npos) << s.message();
}

TEST(InlineConstantIf, ConstantConditionInlinesTheBranch) {
  EXPECT_REWRITES_EXACTLY("inline-constant-if", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] w = {10, 20}, bool c = {1}> {
  t = Mul(x, x)
  y = If (c) <then_branch = then_g () => (float[2] a) {
      a = Add(t, w)
    }, else_branch = else_g () => (float[2] b) {
      b = Neg(x)
    }>
})",
                          R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] w = {10, 20}, bool c = {1}> {
  t = Mul(x, x)
  a = Add(t, w)
  y = Identity(a)
})");
}

// The fold group as a whole leaves neither the branch's Identity nor the dead condition behind
// (eliminate-noops and eliminate-dead-code run in it too: silero_vad's TorchScript export kept 6
// such Identities after `cleanup,fold,fuse`).
TEST(InlineConstantIf, FoldGroupLeavesNoIdentityOrDeadCondition) {
  EXPECT_REWRITES_EXACTLY("fold", R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2,3] x) => (float[2,3] y) <bool c = {1}> {
  t = If (c) <then_branch = tb () => (float[2,3] r) { r = Identity(x) },
              else_branch = eb () => (float[2,3] r) { r = Neg(x) }>
  y = Relu(t)
})",
                          R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2,3] x) => (float[2,3] y) {
  y = Relu(x)
})");
}

TEST(InlineConstantIf, ConditionFromAnInputDoesNotApply) {
  EXPECT_NOT_APPLIED("inline-constant-if", kIfOuter);
}

// A shape test the folding resolves (the sample-rate switch of issue 13): the whole fold group
// leaves no If, and a nested If whose own condition is constant goes too.
TEST(InlineConstantIf, FoldResolvesAShapeConditionAndNestedIfs) {
  auto out = test::run_passes("fold,cleanup", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,16000] x) => (float[1,16000] y) <int64 rate = {16000}, int64 one = {1}, bool yes = {1}> {
  s = Shape(x)
  n = Gather <axis = 0> (s, one)
  c = Equal(n, rate)
  y = If (c) <then_branch = then_g () => (float[1,16000] a) {
      k = Constant <value = float {2}> ()
      a = If (yes) <then_branch = tt () => (float[1,16000] p) {
          p = Mul(x, k)
        }, else_branch = te () => (float[1,16000] q) {
          q = Neg(x)
        }>
    }, else_branch = else_g () => (float[1,16000] b) {
      b = Neg(x)
    }>
})");
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_EQ(out.text.find("If"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("Mul"), std::string::npos) << out.text;
}

// Cleanup and folding run inside a Loop body: the body's constant arithmetic becomes one
// initializer of the body, and the outputs stay the same.
TEST(SubgraphPasses, FoldRunsInsideALoopBody) {
  constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] x) => (float[2] s) <float[2] w = {1, 10}, bool t = {1}> {
  s = Loop (M, t, x) <body = body (int64 i, bool cin, float[2] acc) => (bool cout, float[2] acc2) {
      k1 = Constant <value = float[2] {1, 2}> ()
      k2 = Constant <value = float[2] {3, 4}> ()
      k = Add(k1, k2)
      kk = Identity(k)
      u = Add(acc, kk)
      acc2 = Mul(u, w)
      cout = Identity(cin)
    }>
})";
  auto out = test::run_passes("fold,cleanup", kModel);  // also checks the outputs
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_TRUE(out.changed);
  EXPECT_EQ(out.text.find("Constant"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("Add(acc, kk)"), std::string::npos) << out.text;

  // The body now holds the sum as an initializer (the printer leaves subgraph initializers out).
  ir::Model m = parse(kModel);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fold,cleanup").is_ok());
  passes::PassContext ctx;
  ASSERT_TRUE(pm.run(m, ctx).is_ok());
  const ir::Node* loop = *m.graph->nodes().begin();
  auto body = ir::load_subgraph(*loop, "body");
  ASSERT_TRUE(body.is_ok()) << body.status().message();
  EXPECT_EQ(body->model.graph->num_nodes(), 3u);
  const ir::Value* kk = body->model.graph->find_value("kk");
  ASSERT_NE(kk, nullptr);
  ASSERT_NE(kk->initializer(), nullptr);
  EXPECT_TRUE(kk->initializer()->same_contents(floats({2}, {4, 6})));
  // The outer-scope read of `w` is still an implicit input of the Loop.
  ASSERT_EQ(loop->implicit_inputs().size(), 1u);
  EXPECT_EQ(loop->implicit_inputs()[0]->name(), "w");
}

// Fusion runs in If branches too: MatMul + bias Add in a branch becomes a Gemm there.
TEST(SubgraphPasses, FuseRunsInsideAnIfBranch) {
  constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2,3] x) => (float[2,4] y) <float[3,4] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
                                             float[4] b = {1, -1, 2, -2}> {
  y = If (c) <then_branch = then_g () => (float[2,4] p) {
      m = MatMul(x, w)
      p = Add(m, b)
    }, else_branch = else_g () => (float[2,4] q) {
      m2 = MatMul(x, w)
      q = Relu(m2)
    }>
})";
  auto out = test::run_passes("fuse", kModel);  // also checks the outputs on random inputs
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_TRUE(out.changed);
  EXPECT_NE(out.text.find("Gemm"), std::string::npos) << out.text;
  EXPECT_EQ(out.text.find("Add("), std::string::npos) << out.text;
}

// The plan group plans the top-level graph: the If is one step, the outer values its branches read
// live until that step, and the executor runs the model inside the plan (bodies in their own
// memory) with the outputs of simple mode.
TEST(ControlFlowPlan, ModelWithSubgraphsRunsInsideItsPlan) {
  // A for loop (constant trip count, no condition) has static scan outputs, so it plans.
  constexpr const char* kForLoop = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] s, ys) <int64 M = {3}> {
  s, ys = Loop (M, omitted, x) <body = body (int64 i, bool cin, float[2] acc)
      => (bool cout, float[2] acc2, float[2] y) {
      acc2 = Mul(acc, x)
      y = Identity(acc)
      cout = Identity(cin)
    }>
})";
  int planned = 0;
  for (const char* text : {kIfOuter, kLoopFull, kScan9, kForLoop}) {
    ir::Model m = parse(text);
    const auto inputs = test::random_inputs(m);
    auto want = exec::run_model(m, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    passes::PassManager pm;
    ASSERT_TRUE(pm.add_pipeline("plan").is_ok());
    passes::PassContext ctx;
    Status st = pm.run(m, ctx);
    if (text == kLoopFull) {
      // Its scan output has a data-dependent leading dim: the planner refuses to guess.
      ASSERT_FALSE(st.is_ok());
      EXPECT_NE(st.message().find("ys"), std::string::npos) << st.message();
      continue;
    }
    ASSERT_TRUE(st.is_ok()) << st.message();
    ++planned;
    ASSERT_TRUE(ctx.plan_outcome().has_value());
    const planner::MemoryPlan& plan = ctx.plan_outcome()->plan;
    EXPECT_TRUE(planner::check_plan(plan).is_ok());
    exec::RunOptions ro;
    ro.plan = &plan;
    auto got = exec::run_model(m, inputs, ro);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i) EXPECT_TRUE((*got)[i].same_contents((*want)[i]));
    // The outer value the branches read lives until the If's step.
    if (text == kIfOuter) {
      const planner::PlannedValue* t = nullptr;
      for (const auto& pv : plan.values)
        if (pv.name == "t") t = &pv;
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->last_step, 1);
    }
  }
  EXPECT_EQ(planned, 3);
}

// The ONNX backend node tests of If, Loop and Scan whose values are tensors pass, in simple mode
// and inside a sequential arena plan. (test_if_seq, test_if_opt, test_loop13_seq and
// test_loop16_seq_none carry sequences and optionals: they pass too, in simple mode, since
// tests/sequence.)
TEST(ControlFlowConformance, NodeTestsPass) {
  XOPT_REQUIRE_SHARED(shared);
  exec::conformance::Options options;
  options.also_arena = true;
  for (const char* name : {"test_if", "test_loop11", "test_scan_sum", "test_scan9_sum",
                           "test_scan9_multi_state", "test_scan9_scalar"}) {
    const std::string path = shared + "/onnx-conformance/node/" + name;
    auto r = exec::conformance::run_case(path, options);
    EXPECT_EQ(r.outcome, exec::conformance::Outcome::kPassed) << name << ": " << r.detail;
  }
  for (const char* name :
       {"test_if_seq", "test_if_opt", "test_loop13_seq", "test_loop16_seq_none"}) {
    auto r = exec::conformance::run_case(shared + "/onnx-conformance/node/" + name, options);
    EXPECT_EQ(r.outcome, exec::conformance::Outcome::kPassed) << name << ": " << r.detail;
  }
}

// TorchScript modules with data-dependent ifs (nested, the weights inside the branches) and
// for/while loops, exported by torch 1.13 (torch/gen_torch_cases.py; torch's outputs are the
// reference, onnxruntime agrees): they pass as exported, and after fold,fuse,cleanup,plan inside
// the memory plan.
TEST(ControlFlowTorch, ScriptedModulesRunBeforeAndAfterThePasses) {
  const std::string dir = std::string(XOPT_SOURCE_DIR) + "/tests/control_flow/torch";
  exec::conformance::Options options;
  options.also_arena = true;
  int cases = 0;
  for (const char* name :
       {"torch_if_nested", "torch_if_nested_else", "torch_for_loop", "torch_while_loop"}) {
    const std::string path = dir + "/" + name;
    auto r = exec::conformance::run_case(path, options);
    EXPECT_EQ(r.outcome, exec::conformance::Outcome::kPassed) << name << ": " << r.detail;

    auto model = ir::load_model(path + "/model.onnx");
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    passes::PassManagerOptions pmo;
    pmo.verify_each = true;
    passes::PassManager pm(pmo);
    ASSERT_TRUE(pm.add_pipeline("fold,fuse,cleanup,plan").is_ok());
    passes::PassContext ctx;
    Status st = pm.run(*model, ctx);
    ASSERT_TRUE(st.is_ok()) << name << ": " << st.message();
    std::map<std::string, ir::Tensor> inputs;
    for (size_t i = 0; i < model->graph->runtime_inputs().size(); ++i) {
      auto t = exec::conformance::read_tensor_file(path + "/test_data_set_0/input_" +
                                                   std::to_string(i) + ".pb");
      ASSERT_TRUE(t.is_ok()) << t.status().message();
      inputs[model->graph->runtime_inputs()[i]->name()] = *t;
    }
    // Still ONNX (subgraphs rewritten by the passes included): the checker accepts it.
    try {
      onnx::checker::check_model(ir::model_to_proto(*model));
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": ONNX checker: " << e.what();
    }
    if (const char* out = std::getenv("XOPT_SAVE_OPTIMIZED")) {
      EXPECT_TRUE(ir::save_model(*model, std::string(out) + "/" + name + ".opt.onnx").is_ok());
    }
    // Inside the plan: the control-flow nodes are steps of it, their bodies in their own memory.
    ASSERT_TRUE(ctx.plan_outcome().has_value()) << name;
    exec::RunOptions ro;
    ro.plan = &ctx.plan_outcome()->plan;
    auto got = exec::run_model(*model, inputs, ro);
    ASSERT_TRUE(got.is_ok()) << name << ": " << got.status().message();
    for (size_t i = 0; i < got->size(); ++i) {
      auto want = exec::conformance::read_tensor_file(path + "/test_data_set_0/output_" +
                                                      std::to_string(i) + ".pb");
      ASSERT_TRUE(want.is_ok()) << want.status().message();
      std::string why;
      EXPECT_TRUE(exec::conformance::outputs_match((*got)[i], *want, 1e-4, 1e-5, &why))
          << name << " output " << i << ": " << why;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 4);
}

}  // namespace
}  // namespace xopt
