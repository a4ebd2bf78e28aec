// Pipeline stages (planner/stage_split.h): the min-max partition against an exhaustive dynamic
// program, and on random graphs, an If reading across a cut and the shared models: every node in
// exactly one stage, every value read across a cut transferred exactly once to each stage that
// reads it, and the stages run one after another on the CPU executor equal the unsplit run bit for
// bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/text.h"
#include "planner/lifetimes.h"
#include "planner/stage_split.h"
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"
#include "tests/util/test_util.h"

namespace xopt::planner {
namespace {

// The best largest run sum over every cut of `v` into `parts` non-empty runs.
double best_by_dp(const std::vector<double>& v, size_t parts) {
  const size_t n = v.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  best[0][0] = 0;
  for (size_t p = 1; p <= parts; ++p)
    for (size_t end = 1; end <= n; ++end) {
      double sum = 0;
      for (size_t begin = end; begin-- > 0;) {
        sum += v[begin];
        best[p][end] = std::min(best[p][end], std::max(best[p - 1][begin], sum));
      }
    }
  return best[parts][n];
}

TEST(MinMaxPartition, MatchesAnExhaustiveDynamicProgram) {
  std::mt19937 rng(20261207);
  for (int iter = 0; iter < 3000; ++iter) {
    const size_t n = 1 + rng() % 14;
    const size_t parts = 1 + rng() % n;
    std::vector<double> v(n);
    for (double& x : v) x = rng() % 5 == 0 ? 0.0 : std::uniform_real_distribution<>(0, 1)(rng);
    const std::vector<size_t> begins = min_max_partition(v, parts);
    ASSERT_EQ(begins.size(), parts);
    ASSERT_EQ(begins[0], 0u);
    double worst = 0;
    for (size_t r = 0; r < parts; ++r) {
      const size_t end = r + 1 < parts ? begins[r + 1] : n;
      ASSERT_LT(begins[r], end) << "run " << r << " is empty";
      double sum = 0;
      for (size_t i = begins[r]; i < end; ++i) sum += v[i];
      worst = std::max(worst, sum);
    }
    EXPECT_LE(worst, best_by_dp(v, parts) * (1 + 1e-12) + 1e-15) << "iteration " << iter;
  }
}

// Runs the stage models one after another, each reading the graph inputs and what earlier stages
// produced; returns the original graph's outputs.
std::vector<ir::Tensor> run_stages(const ir::Model& whole, std::vector<ir::Model>& stages,
                                   std::map<std::string, ir::Tensor> env) {
  for (ir::Model& m : stages) {
    std::map<std::string, ir::Tensor> feed;
    for (const ir::Value* v : m.graph->runtime_inputs()) {
      auto it = env.find(v->name());
      EXPECT_NE(it, env.end()) << "stage input '" << v->name() << "' was never produced";
      if (it != env.end()) feed.emplace(v->name(), it->second);
    }
    auto out = exec::run_model(m, feed);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    if (!out.is_ok()) return {};
    for (size_t i = 0; i < out->size(); ++i) env[m.graph->outputs()[i]->name()] = (*out)[i];
  }
  std::vector<ir::Tensor> result;
  for (const ir::Value* v : whole.graph->outputs()) result.push_back(env.at(v->name()));
  return result;
}

bool bitwise_equal(const ir::Tensor& a, const ir::Tensor& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Splits `model` over 1..max_devices stages and checks the split's invariants and the stage run.
void check_splits(ir::Model& model, const std::map<std::string, ir::Tensor>& inputs,
                  size_t max_devices) {
  const ir::Graph& g = *model.graph;
  const auto order = graph_order(g);
  auto want = exec::run_model(model, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  for (size_t devices = 1; devices <= std::min(max_devices, order.size()); ++devices) {
    SCOPED_TRACE(std::to_string(devices) + " devices");
    auto split = split_into_stages(g, order, devices);
    ASSERT_TRUE(split.is_ok()) << split.status().message();
    ASSERT_EQ(split->stages.size(), devices);
    // Every node in exactly one stage: the stages tile the order.
    std::map<const ir::Node*, size_t> stage_of;
    size_t next = 0;
    double load = 0;
    for (size_t s = 0; s < devices; ++s) {
      const Stage& st = split->stages[s];
      ASSERT_EQ(st.begin, next);
      ASSERT_LT(st.begin, st.end);
      for (size_t i = st.begin; i < st.end; ++i) stage_of[order[i]] = s;
      next = st.end;
      load += st.load;
    }
    ASSERT_EQ(next, order.size());
    bool weights = false;
    for (const ir::Node* n : order)
      for (const ir::Value* v : n->inputs())
        weights = weights || (v != nullptr && v->is_constant());
    EXPECT_NEAR(load, weights ? 2.0 : 1.0, 1e-9);  // the parameter share, then the time share
    // Each value read across a cut is transferred exactly once to each reading stage, from its
    // producer's stage; nothing else is.
    std::set<std::pair<std::string, size_t>> needed, got;
    for (const ir::Node* n : order) {
      std::vector<const ir::Value*> reads(n->inputs().begin(), n->inputs().end());
      reads.insert(reads.end(), n->implicit_inputs().begin(), n->implicit_inputs().end());
      for (const ir::Value* v : reads)
        if (v != nullptr && v->producer() != nullptr &&
            stage_of.at(v->producer()) != stage_of.at(n))
          needed.insert({v->name(), stage_of.at(n)});
    }
    for (const Transfer& t : split->transfers) {
      EXPECT_TRUE(got.insert({t.value, t.to}).second) << t.value << " sent twice to " << t.to;
      EXPECT_LT(t.from, t.to);
      EXPECT_EQ(t.from, stage_of.at(g.find_value(t.value)->producer()));
    }
    EXPECT_EQ(got, needed);
    auto stages = stage_models(model, order, *split);
    ASSERT_TRUE(stages.is_ok()) << stages.status().message();
    const std::vector<ir::Tensor> got_out = run_stages(model, *stages, inputs);
    ASSERT_EQ(got_out.size(), want->size());
    for (size_t i = 0; i < got_out.size(); ++i)
      EXPECT_TRUE(bitwise_equal(got_out[i], (*want)[i])) << g.outputs()[i]->name();
  }
}

// A random DAG of float ops over [3,4] values: each node reads one or two earlier values (graph
// inputs, weights or node results); the last three values are outputs.
std::string random_graph_text(std::mt19937& rng, int nodes) {
  std::vector<std::string> values = {"x", "y", "w"};
  std::string body;
  const char* binary[] = {"Add", "Mul", "Sub", "Max"};
  const char* unary[] = {"Relu", "Tanh", "Neg", "Sigmoid"};
  for (int i = 0; i < nodes; ++i) {
    const std::string out = "v" + std::to_string(i);
    const std::string& a = values[rng() % values.size()];
    if (rng() % 3 == 0) {
      body += "      " + out + " = " + unary[rng() % 4] + "(" + a + ")\n";
    } else {
      const std::string& b = values[rng() % values.size()];
      body += "      " + out + " = " + binary[rng() % 4] + "(" + a + ", " + b + ")\n";
    }
    values.push_back(out);
  }
  const size_t n = values.size();
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (float[3,4] x, float[3,4] y) => (float[3,4] " +
         values[n - 1] + ", float[3,4] " + values[n - 2] + ", float[3,4] " + values[n - 3] +
         ")\n"
         "  <float[3,4] w = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}> {\n" +
         body + "    }";
}

TEST(StageSplit, RandomGraphsRunSplitAsUnsplit) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 60; ++iter) {
    SCOPED_TRACE("graph " + std::to_string(iter));
    ir::Model m = test::parse_text(random_graph_text(rng, 3 + static_cast<int>(rng() % 20)));
    auto inputs = test::random_inputs(*m.graph, 1000 + static_cast<unsigned>(iter));
    check_splits(m, inputs, 5);
  }
}

// An If whose branches read a value produced two stages earlier (an outer-scope read): it is
// transferred to the If's stage like an explicit input.
TEST(StageSplit, SubgraphReadsCrossTheCut) {
  ir::Model m = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x, bool c) => (float[4] y) {
      a = Relu(x)
      b = Neg(a)
      d = Tanh(b)
      y = If(c) <
        then_branch = t () => (float[4] r) { r = Add(a, d) },
        else_branch = e () => (float[4] r) { r = Mul(a, d) }>
    })");
  std::map<std::string, ir::Tensor> in = {{"x", ir::Tensor::of<float>({4}, {-1, 2, -3, 4})},
                                          {"c", ir::Tensor::scalar<bool>(true)}};
  check_splits(m, in, 4);
  const auto order = graph_order(*m.graph);
  auto split = split_into_stages(*m.graph, order, 4);
  ASSERT_TRUE(split.is_ok());
  EXPECT_EQ(split->stages[3].receives, (std::vector<std::string>{"a", "d"}));
}

TEST(StageSplit, SharedModelsRunSplitAsUnsplit) {
  XOPT_REQUIRE_SHARED(shared);
  for (const char* name : {"squeezenet1_1", "bert_mini"}) {
    SCOPED_TRACE(name);
    auto m = ir::load_model(test::shared_model_path(name));
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    auto in = exec::conformance::read_tensor_file(std::string(shared) + "/models/" + name +
                                                  "/test_data_set_0/input_0.pb");
    ASSERT_TRUE(in.is_ok()) << in.status().message();
    check_splits(*m, {{m->graph->runtime_inputs().at(0)->name(), *in}}, 3);
  }
}

TEST(StageSplit, MoreDevicesThanNodesIsAnError) {
  ir::Model m = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) { y = Relu(x) })");
  auto split = split_into_stages(*m.graph, graph_order(*m.graph), 2);
  ASSERT_FALSE(split.is_ok());
  EXPECT_NE(split.status().message().find("cannot split 1 nodes over 2 devices"), std::string::npos)
      << split.status().message();
  // An order that leaves a node out would leave it in no stage.
  ir::Model two = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) { a = Relu(x)
      y = Neg(a) })");
  auto partial = split_into_stages(*two.graph, {graph_order(*two.graph)[0]}, 1);
  ASSERT_FALSE(partial.is_ok());
  EXPECT_NE(partial.status().message().find("the order names 1 nodes but the graph has 2"),
            std::string::npos)
      << partial.status().message();
}

}  // namespace
}  // namespace xopt::planner
