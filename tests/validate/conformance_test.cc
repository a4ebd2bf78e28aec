// The multi-node conformance folders: all nine light models (model-zoo topologies) match their
// expected outputs, and every simple/, pytorch-converted/ and pytorch-operator/ case whose ops the
// CPU executor claims passes. Cases with an op we do not claim are listed, never counted as passed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "executor/cpu/conformance.h"
#include "executor/cpu/conformance_suite.h"
#include "executor/cpu/kernel.h"
#include "ir/onnx_io.h"
#include "tests/util/test_util.h"

namespace xopt::exec {
namespace {

namespace fs = std::filesystem;

// The ops of a case's model that have no kernel at the model's opset ("" when all are claimed).
std::string unclaimed_ops(const std::string& case_path) {
  fs::path p(case_path);
  auto m = ir::load_model(fs::is_regular_file(p) ? p.string() : (p / "model.onnx").string());
  if (!m.is_ok()) return "(model does not load: " + m.status().message() + ")";
  std::set<std::string> missing;
  for (const ir::Node* n : m->graph->nodes())
    if (KernelRegistry::global().find(n->domain(), n->op_type(), n->opset()) == nullptr)
      missing.insert(n->op_type() + "@" + std::to_string(n->opset()));
  std::string s;
  for (const auto& x : missing) s += (s.empty() ? "" : ", ") + x;
  return s;
}

TEST(Conformance, AllNineLightModelsMatch) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string dir = shared + "/onnx-conformance/light";
  conformance::SuiteOptions o;
  auto results = conformance::run_suites({dir}, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  EXPECT_EQ(results->size(), 9u);
  for (const auto& r : *results) {
    std::printf("[ light  ] %-24s %s %s\n", r.name.c_str(), conformance::outcome_name(r.outcome),
                r.detail.c_str());
    EXPECT_EQ(r.outcome, conformance::Outcome::kPassed) << r.name << ": " << r.detail;
  }
}

TEST(Conformance, MultiNodeCasesWithClaimedOpsPass) {
  XOPT_REQUIRE_SHARED(shared);
  for (const char* suite : {"simple", "pytorch-converted", "pytorch-operator"}) {
    SCOPED_TRACE(suite);
    const std::string dir = shared + "/onnx-conformance/" + suite;
    auto results = conformance::run_suites({dir}, {});
    ASSERT_TRUE(results.is_ok()) << results.status().message();
    ASSERT_FALSE(results->empty());
    int passed = 0, claimed = 0;
    std::vector<std::string> unsupported;
    for (const auto& r : *results) {
      const std::string missing = unclaimed_ops(r.path);
      if (missing.empty()) {
        ++claimed;
        EXPECT_EQ(r.outcome, conformance::Outcome::kPassed)
            << suite << "/" << r.name << " uses only claimed ops but "
            << conformance::outcome_name(r.outcome) << ": " << r.detail;
      } else {
        EXPECT_NE(r.outcome, conformance::Outcome::kPassed)
            << r.name << " passed without " << missing;
        EXPECT_EQ(r.outcome, conformance::Outcome::kUnsupported) << r.name << ": " << r.detail;
        unsupported.push_back(r.name + " (no kernel: " + missing + ")");
      }
      passed += r.outcome == conformance::Outcome::kPassed;
    }
    std::printf("[ %-17s ] %zu cases: %d with claimed ops, %d passed, %zu unsupported\n", suite,
                results->size(), claimed, passed, unsupported.size());
    for (const auto& u : unsupported) std::printf("    unsupported: %s\n", u.c_str());
  }
}

}  // namespace
}  // namespace xopt::exec
