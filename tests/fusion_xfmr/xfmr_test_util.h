// Helpers for the transformer fusion tests: the ops after a pipeline, and "the CPU
// executor gives the same outputs before and after the pass" (inputs: tests/util/equivalence.h).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "executor/cpu/session.h"
#include "tests/util/pass_golden.h"

namespace xopt::test {

// "domain.Op" (or "Op") of every node after running `pipeline` on `text`, in graph order: the
// printed text leaves domains out, so tests that care about com.microsoft vs ONNX check this.
inline std::vector<std::string> ops_after(std::string_view pipeline, std::string_view text) {
  ir::Model m = parse_text(text);
  passes::PassManager pm;
  std::vector<std::string> out;
  if (!pm.add_pipeline(pipeline).is_ok()) return out;
  passes::PassContext ctx;
  if (!pm.run(m, ctx).is_ok()) return out;
  for (const ir::Node* n : m.graph->nodes())
    out.push_back((n->domain().empty() ? "" : n->domain() + ".") + n->op_type());
  return out;
}

// Runs `pipeline` on the model in `text` (which it must change), then checks that the CPU executor
// gives the same outputs for the model before and after, within rtol 1e-4 (atol 1e-5) of their
// scale (tests/util/compare_outputs.h).
inline void expect_numerically_equal(std::string_view pipeline, std::string_view text,
                                     uint32_t seed = 7) {
  ir::Model before = parse_text(text);
  ir::Model after = parse_text(text);
  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  ASSERT_TRUE(pm.add_pipeline(pipeline).is_ok());
  passes::PassContext ctx;
  passes::PipelineStats stats;
  Status s = pm.run(after, ctx, &stats);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_TRUE(stats.changed) << pipeline << " did not change the model";
  auto inputs = random_inputs(before, seed);
  auto want = exec::run_model(before, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  auto got = exec::run_model(after, inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message() << "\n" << ir::print_graph_text(after);
  EXPECT_EQ(outputs_difference(*got, *want), "");
}

}  // namespace xopt::test

// Runs `pass` on `before` and expects the printed result to equal `after` (ONNX text). Fused ops
// compute in another order than the chains they replace, so outputs are compared with a tolerance
// within rounding, not bit for bit (run_pipeline fails the test when they differ or cannot be
// compared).
#define EXPECT_FUSES(pass, before, after)                                                 \
  do {                                                                                    \
    auto xopt_outcome_ =                                                                  \
        ::xopt::test::run_pipeline(pass, before, nullptr, ::xopt::test::kWithinRounding); \
    ASSERT_TRUE(xopt_outcome_.status.is_ok()) << xopt_outcome_.status.message();          \
    EXPECT_TRUE(xopt_outcome_.changed);                                                   \
    EXPECT_EQ(xopt_outcome_.text, ::xopt::test::canonical(after));                        \
  } while (0)
