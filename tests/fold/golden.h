// Golden before/after tests for the fold and fuse passes: parse a model in ONNX text syntax, run a
// pass (or pipeline) through the PassManager with verification after every pass, compare the
// printed graph with the expected one, and check with the CPU executor that the rewritten model
// computes what the original did (rtol 1e-4: folding weights changes rounding).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "ir/text.h"
#include "passes/pass_manager.h"
#include "tests/fold/equivalence.h"

namespace xopt::test {

inline ir::Model parse_text(std::string_view text) {
  auto m = ir::parse_model_text(text);
  if (!m.is_ok()) {
    ADD_FAILURE() << m.status().message();
    return {};
  }
  return std::move(m).value();
}

// The graph of `text` as print_graph_text prints it, so expected graphs can be written loosely.
inline std::string canonical(std::string_view text) {
  return ir::print_graph_text(parse_text(text));
}

struct Rewrite {
  Status status;
  bool changed = false;
  std::string text;  // the graph after the run
  passes::PipelineStats stats;
  // Empty when the outputs agree on random inputs, or when the executor cannot run the original
  // (an op without a kernel); otherwise what differs.
  std::string numeric_difference;
};

inline std::string outputs_differ(const ir::Model& before, const ir::Model& after) {
  auto inputs = random_inputs(*before.graph);
  auto want = exec::run_model(before, inputs);
  if (!want.is_ok()) return "";
  auto got = exec::run_model(after, inputs);
  if (!got.is_ok()) return "the rewritten model does not run: " + got.status().message();
  if (got->size() != want->size()) return "different number of outputs";
  for (size_t i = 0; i < got->size(); ++i) {
    double m = mismatch((*got)[i], (*want)[i], 1e-4, 1e-5);
    if (m > 1.0)
      return "output " + before.graph->outputs()[i]->name() + " differs (" + std::to_string(m) +
             "x the tolerance)";
  }
  return "";
}

// Runs `pipeline` on the model in `text`, verifying after every pass.
inline Rewrite run_passes(std::string_view pipeline, std::string_view text,
                          passes::PassContext* context = nullptr) {
  Rewrite out;
  ir::Model model = parse_text(text);
  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  out.status = pm.add_pipeline(pipeline);
  if (!out.status.is_ok()) return out;
  passes::PassContext local;
  out.status = pm.run(model, context != nullptr ? *context : local, &out.stats);
  out.changed = out.stats.changed;
  out.text = ir::print_graph_text(model);
  if (out.status.is_ok()) out.numeric_difference = outputs_differ(parse_text(text), model);
  return out;
}

inline int64_t counter(const passes::PipelineStats& stats, std::string_view pass,
                       const std::string& name) {
  const passes::PassStats* p = stats.find(pass);
  if (p == nullptr) return 0;
  auto it = p->counters.find(name);
  return it == p->counters.end() ? 0 : it->second;
}

}  // namespace xopt::test

// Runs `pass` on `before`; expects a change, the printed result to equal `after` (also ONNX text)
// and the same outputs.
#define EXPECT_REWRITES(pass, before, after)                         \
  do {                                                               \
    auto xopt_r_ = ::xopt::test::run_passes(pass, before);           \
    ASSERT_TRUE(xopt_r_.status.is_ok()) << xopt_r_.status.message(); \
    EXPECT_TRUE(xopt_r_.changed);                                    \
    EXPECT_EQ(xopt_r_.text, ::xopt::test::canonical(after));         \
    EXPECT_EQ(xopt_r_.numeric_difference, "");                       \
  } while (0)

// Runs `pass` on `model` and expects it to report no change and leave the graph as it was.
#define EXPECT_NOT_APPLIED(pass, model)                              \
  do {                                                               \
    auto xopt_r_ = ::xopt::test::run_passes(pass, model);            \
    ASSERT_TRUE(xopt_r_.status.is_ok()) << xopt_r_.status.message(); \
    EXPECT_FALSE(xopt_r_.changed);                                   \
    EXPECT_EQ(xopt_r_.text, ::xopt::test::canonical(model));         \
  } while (0)
