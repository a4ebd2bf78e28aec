// Golden before/after tests for passes: parse a model in ONNX text syntax, run a pass (or
// pipeline) through the PassManager with verification after every pass, compare the printed graph
// with the expected one, and check with the CPU executor that the rewritten model computes what the
// original did: bit for bit (cleanup passes, data movement) or within rounding (passes that fold
// weights or change the order of float operations).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>

#include "executor/cpu/session.h"
#include "ir/text.h"
#include "passes/pass_manager.h"
#include "tests/util/equivalence.h"

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

// How close the outputs before and after must be: exact (bit for bit) when both are zero.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};
inline constexpr Tolerance kExact{};
inline constexpr Tolerance kWithinRounding{1e-4, 1e-5};

// Empty when `after` computes what `before` computes on sample inputs (within `tol`, by
// tests/util/compare_outputs.h), else the difference. `*checked` says whether the CPU executor
// could run `before` at all; when it could not, `*why_unchecked` says why and "" is returned.
inline std::string numeric_difference(const ir::Model& before, const ir::Model& after,
                                      Tolerance tol = kExact, bool* checked = nullptr,
                                      std::string* why_unchecked = nullptr) {
  auto inputs = random_inputs(before);
  auto expected = exec::run_model(before, inputs);
  if (checked != nullptr) *checked = expected.is_ok();
  if (!expected.is_ok()) {
    if (why_unchecked != nullptr) *why_unchecked = expected.status().message();
    return "";
  }
  auto got = exec::run_model(after, inputs);
  if (!got.is_ok()) return "the rewritten model does not run: " + got.status().message();
  OutputTolerance ot;
  if (tol.exact()) {
    ot = kBitwise;
  } else {
    ot.rtol = tol.rtol;
    ot.atol = tol.atol;
  }
  std::vector<std::string> names;
  for (const ir::Value* v : before.graph->outputs()) names.push_back(v->name());
  return outputs_difference(*got, *expected, ot, names);
}

struct PassOutcome {
  Status status;
  bool changed = false;
  std::string text;  // graph after the run
  passes::PipelineStats stats;
  std::string numeric_difference;    // see numeric_difference()
  bool numerically_checked = false;  // the CPU executor could run the model
  std::string why_unchecked;         // why it could not
};

// Runs `pipeline` (pass or group names) on the model in `text`, verifying after every pass. When
// the pipeline changed the model, the rewritten model must compute what the original did (within
// `tol`) on random inputs, checked with the CPU executor; the test fails if the outputs differ or
// if the check could not run. A test whose model the CPU executor cannot run says why in
// `structural_only_because` (non-empty): its numeric check is then not required, and the test
// fails if the check ran after all (so the reason cannot go stale).
inline PassOutcome run_pipeline(std::string_view pipeline, std::string_view text,
                                passes::PassContext* context = nullptr, Tolerance tol = kExact,
                                std::string_view structural_only_because = {}) {
  PassOutcome out;
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
  if (!out.status.is_ok()) return out;
  out.numeric_difference = numeric_difference(parse_text(text), model, tol,
                                              &out.numerically_checked, &out.why_unchecked);
  if (!out.changed) return out;
  if (!out.numerically_checked && structural_only_because.empty())
    ADD_FAILURE() << pipeline << ": the numeric check did not run (the CPU executor cannot run "
                  << "the model: " << out.why_unchecked
                  << "). Give the reason with EXPECT_REWRITES_STRUCTURALLY or "
                  << "run_pipeline(..., structural_only_because).";
  if (out.numerically_checked && !structural_only_because.empty())
    ADD_FAILURE() << pipeline << ": declared structural only (\"" << structural_only_because
                  << "\") but the CPU executor runs the model: check the numbers instead.";
  if (!out.numeric_difference.empty())
    ADD_FAILURE() << pipeline
                  << ": the rewritten model computes something else: " << out.numeric_difference;
  return out;
}

// run_pipeline for passes that change rounding (folding weights, fusing float arithmetic).
inline PassOutcome run_passes(std::string_view pipeline, std::string_view text,
                              passes::PassContext* context = nullptr) {
  return run_pipeline(pipeline, text, context, kWithinRounding);
}

// How many nodes of each "domain.Op" (or "Op") the graph has.
inline std::map<std::string, int> op_counts(const ir::Graph& g) {
  std::map<std::string, int> out;
  for (const ir::Node* n : g.nodes())
    ++out[(n->domain().empty() ? "" : n->domain() + ".") + n->op_type()];
  return out;
}
inline int count(const std::map<std::string, int>& c, const std::string& op) {
  auto it = c.find(op);
  return it == c.end() ? 0 : it->second;
}

inline int64_t counter(const passes::PipelineStats& stats, std::string_view pass,
                       const std::string& name) {
  const passes::PassStats* p = stats.find(pass);
  if (p == nullptr) return 0;
  auto it = p->counters.find(name);
  return it == p->counters.end() ? 0 : it->second;
}

}  // namespace xopt::test

#define XOPT_EXPECT_REWRITES_(tol, why, pass, before, after)                          \
  do {                                                                                \
    auto xopt_outcome_ = ::xopt::test::run_pipeline(pass, before, nullptr, tol, why); \
    ASSERT_TRUE(xopt_outcome_.status.is_ok()) << xopt_outcome_.status.message();      \
    EXPECT_TRUE(xopt_outcome_.changed);                                               \
    EXPECT_EQ(xopt_outcome_.text, ::xopt::test::canonical(after));                    \
  } while (0)

// Runs `pass` on `before`; expects a change, the printed result to equal `after` (also ONNX text)
// and the same outputs within rounding (rtol 1e-4, atol 1e-5), checked with the CPU executor (the
// test fails when it cannot run the model).
#define EXPECT_REWRITES(pass, before, after) \
  XOPT_EXPECT_REWRITES_(::xopt::test::kWithinRounding, {}, pass, before, after)
// The same, with outputs equal bit for bit.
#define EXPECT_REWRITES_EXACTLY(pass, before, after) \
  XOPT_EXPECT_REWRITES_(::xopt::test::kExact, {}, pass, before, after)
// The structural half only, for a model the CPU executor cannot run; `why` (a non-empty string)
// says why. Fails when the executor can run the model after all.
#define EXPECT_REWRITES_STRUCTURALLY(pass, before, after, why) \
  XOPT_EXPECT_REWRITES_(::xopt::test::kExact, why, pass, before, after)

// Runs `pass` on `model` and expects it to report no change and leave the graph as it was.
#define EXPECT_NOT_APPLIED(pass, model)                                          \
  do {                                                                           \
    auto xopt_outcome_ = ::xopt::test::run_pipeline(pass, model);                \
    ASSERT_TRUE(xopt_outcome_.status.is_ok()) << xopt_outcome_.status.message(); \
    EXPECT_FALSE(xopt_outcome_.changed);                                         \
    EXPECT_EQ(xopt_outcome_.text, ::xopt::test::canonical(model));               \
  } while (0)
