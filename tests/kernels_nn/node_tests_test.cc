// Every ONNX backend node test (../shared/onnx-conformance/node) whose single node is one of the NN
// ops must pass, run through the conformance runner (executor/cpu/conformance.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "executor/cpu/conformance.h"
#include "tests/util/test_util.h"

namespace xopt::test {
namespace {

namespace conf = exec::conformance;

const std::set<std::string>& nn_ops() {
  static const std::set<std::string> ops = {"Conv",
                                            "ConvTranspose",
                                            "AveragePool",
                                            "MaxPool",
                                            "LpPool",
                                            "GlobalAveragePool",
                                            "GlobalMaxPool",
                                            "GlobalLpPool",
                                            "LRN",
                                            "BatchNormalization",
                                            "InstanceNormalization",
                                            "LayerNormalization",
                                            "Gemm",
                                            "MatMul",
                                            "Resize",
                                            "Upsample"};
  return ops;
}

TEST(NnNodeTests, EveryNodeTestOfTheNnOpsPasses) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string root = shared + "/onnx-conformance/node";
  std::vector<std::string> cases;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string model = (e.path() / "model.onnx").string();
    if (!std::filesystem::exists(model)) continue;
    onnx::ModelProto m = read_proto_file(model);
    if (m.graph().node_size() == 1 && m.graph().node(0).domain().empty() &&
        nn_ops().count(m.graph().node(0).op_type()) > 0)
      cases.push_back(e.path().string());
  }
  std::sort(cases.begin(), cases.end());
  ASSERT_GE(cases.size(), 150u);
  std::vector<conf::CaseResult> results;
  for (const auto& c : cases) {
    results.push_back(conf::run_case(c));
    const conf::CaseResult& r = results.back();
    if (r.outcome != conf::Outcome::kPassed)
      ADD_FAILURE() << r.name << " (" << r.op << " opset " << r.opset
                    << "): " << conf::outcome_name(r.outcome) << ": " << r.detail;
  }
  std::printf("%s", conf::format_report(results, false).c_str());
  const conf::Tally t = conf::totals(results);
  std::printf("NN node tests: %d passed, %d failed, %d unsupported of %d\n", t.passed, t.failed,
              t.unsupported, t.total());
  EXPECT_EQ(t.passed, t.total());
}

}  // namespace
}  // namespace xopt::test
