// Runs every case folder under `root` (the ONNX backend-test layout: model.onnx and
// test_data_set_*) through the conformance runner; each case that does not pass is a failure
// naming it, and the tally is printed. For the generated kernel cases of tests/kernels_*.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "executor/cpu/conformance.h"

namespace xopt::test {

inline void expect_generated_cases_pass(const std::string& root, size_t min_cases,
                                        const exec::conformance::Options& options = {}) {
  namespace conf = exec::conformance;
  const std::vector<std::string> cases = conf::list_cases(root);
  ASSERT_GE(cases.size(), min_cases) << "test data missing under " << root;
  std::vector<conf::CaseResult> results;
  for (const auto& c : cases) {
    results.push_back(conf::run_case(c, options));
    const conf::CaseResult& r = results.back();
    if (r.outcome != conf::Outcome::kPassed)
      ADD_FAILURE() << r.name << " (" << r.op << " opset " << r.opset
                    << "): " << conf::outcome_name(r.outcome) << ": " << r.detail;
  }
  const conf::Tally t = conf::totals(results);
  std::printf("%s: %d passed, %d failed, %d unsupported of %d\n", root.c_str(), t.passed, t.failed,
              t.unsupported, t.total());
  EXPECT_EQ(t.passed, t.total());
}

}  // namespace xopt::test
