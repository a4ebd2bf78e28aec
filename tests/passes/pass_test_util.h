// Golden-test helpers: parse a model in ONNX text syntax, run one pass (or pipeline) through the
// PassManager with verification after every pass, and compare printed graphs.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "ir/text.h"
#include "passes/pass_manager.h"

namespace xopt::test {

inline ir::Model parse_or_die(std::string_view text) {
  auto m = ir::parse_model_text(text);
  if (!m.is_ok()) {
    ADD_FAILURE() << m.status().message();
    return {};
  }
  return std::move(m).value();
}

// The graph of `text` as print_graph_text prints it, so expected graphs can be written loosely.
inline std::string canonical_text(std::string_view text) {
  return ir::print_graph_text(parse_or_die(text));
}

struct PassOutcome {
  Status status;
  bool changed = false;
  std::string text;  // graph after the run
  passes::PipelineStats stats;
};

// Runs `pipeline` (pass or group names) on the model in `text`, verifying after every pass.
inline PassOutcome run_pipeline(std::string_view pipeline, std::string_view text,
                                passes::PassContext* context = nullptr) {
  PassOutcome out;
  ir::Model model = parse_or_die(text);
  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  out.status = pm.add_pipeline(pipeline);
  if (!out.status.is_ok()) return out;
  passes::PassContext local;
  out.status = pm.run(model, context != nullptr ? *context : local, &out.stats);
  out.changed = out.stats.changed;
  out.text = ir::print_graph_text(model);
  return out;
}

}  // namespace xopt::test

// Runs `pass` on `before` and expects the printed result to equal `after` (also ONNX text).
#define EXPECT_PASS_REWRITES(pass, before, after)                                \
  do {                                                                           \
    auto xopt_outcome_ = ::xopt::test::run_pipeline(pass, before);               \
    ASSERT_TRUE(xopt_outcome_.status.is_ok()) << xopt_outcome_.status.message(); \
    EXPECT_TRUE(xopt_outcome_.changed);                                          \
    EXPECT_EQ(xopt_outcome_.text, ::xopt::test::canonical_text(after));          \
  } while (0)

// Runs `pass` on `model` and expects it to report no change and leave the graph as it was.
#define EXPECT_PASS_DOES_NOT_APPLY(pass, model)                                  \
  do {                                                                           \
    auto xopt_outcome_ = ::xopt::test::run_pipeline(pass, model);                \
    ASSERT_TRUE(xopt_outcome_.status.is_ok()) << xopt_outcome_.status.message(); \
    EXPECT_FALSE(xopt_outcome_.changed);                                         \
    EXPECT_EQ(xopt_outcome_.text, ::xopt::test::canonical_text(model));          \
  } while (0)
