// Algorithm choices stored in a model (metadata "xopt.cuda_algorithms", written by
// `xopt --device cuda --tune`): plan-info prints them, and a malformed record is refused as a bad
// model naming the key, never ignored. The GPU half (choices taken without searching) is
// tests/cuda/algorithm_choice_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

onnx::ModelProto planned_with(const test::TempDir& dir, const std::string* choices) {
  test::write_proto(dir / "m.onnx", test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,3,8,8] x, float[4,3,3,3] w) => (float[1,4,6,6] y) {
      y = Conv(x, w)
    })"));
  auto r = test::run_xopt({"--passes=plan", dir / "m.onnx", "-o", dir / "planned.onnx", "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(test::read_file(dir / "planned.onnx")));
  if (choices != nullptr) {
    auto* p = m.add_metadata_props();
    p->set_key("xopt.cuda_algorithms");
    p->set_value(*choices);
  }
  return m;
}

TEST(AlgorithmChoicesCli, PlanInfoPrintsThem) {
  test::TempDir dir;
  const std::string doc = R"json({"version": 1, "device": "NVIDIA H200 (sm_90)",
                                  "nodes": {"n0": "1:2", "n1": "6:1"}})json";
  test::write_proto(dir / "t.onnx", planned_with(dir, &doc));
  auto r = test::run_xopt({"plan-info", dir / "t.onnx", "--values"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("algorithm choices: 2 nodes, searched on NVIDIA H200 (sm_90)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  n1: 6:1"), std::string::npos) << r.out;
  // Without the record nothing is said.
  test::write_proto(dir / "plain.onnx", planned_with(dir, nullptr));
  auto plain = test::run_xopt({"plan-info", dir / "plain.onnx"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("algorithm choices"), std::string::npos) << plain.out;
}

TEST(AlgorithmChoicesCli, AMalformedRecordIsABadModel) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not a JSON object"},
      {R"({"version": 2, "nodes": {}})", "version must be 1"},
      {R"({"version": 1, "nodes": []})", "\"nodes\" must be an object"},
      {R"({"version": 1, "nodes": {"n0": 6}})", "the choice for node 'n0' is not a string"},
  };
  for (const auto& [doc, says] : cases) {
    SCOPED_TRACE(doc);
    test::TempDir dir;
    test::write_proto(dir / "t.onnx", planned_with(dir, &doc));
    auto r = test::run_xopt({"plan-info", dir / "t.onnx"});
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("xopt.cuda_algorithms"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace xopt
