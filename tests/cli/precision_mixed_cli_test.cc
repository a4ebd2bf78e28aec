// xopt --precision mixed: the calibration run and choice (precision/), its report in the model's
// metadata, and `xopt validate --json` measuring the converted model against the original.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

// Four elementwise nodes: in fp16 they move half the bytes, and the two Casts at the boundary
// (x in, y out) cost less than that saves.
constexpr const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[8,64] x) => (float[8,64] y) {
    a = Relu(x)
    b = Sigmoid(a)
    c = Tanh(b)
    y = Neg(c)
  })";

// A value past 65504 (x * 1e5): those nodes cannot be fp16.
constexpr const char* kBig = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[8,64] x) => (float[8,64] y) <float[1] s = {100000}, float[1] t = {0.00001}> {
    a = Mul(x, s)
    b = Neg(a)
    y = Mul(b, t)
  })";

TEST(PrecisionMixedCli, ChoosesRecordsAndValidates) {
  test::TempDir dir;
  test::write_proto(dir / "m.onnx", test::parse_text_proto(kChain));
  auto r = test::run_xopt({"--passes=plan", "--precision", "mixed", "--max-error", "1e-2",
                           dir / "m.onnx", "-o", dir / "mixed.onnx", "--report", dir / "rep"});
  ASSERT_EQ(r.code, 0) << r.err;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(test::read_file(dir / "mixed.onnx")));
  std::string choice;
  for (const auto& p : m.metadata_props())
    if (p.key() == "xopt.precision_choice") choice = p.value();
  ASSERT_FALSE(choice.empty()) << "no xopt.precision_choice metadata";
  auto j = nlohmann::json::parse(choice);
  EXPECT_EQ(j["counts"]["float16"], 4) << j.dump(1);
  EXPECT_EQ(j["casts"], 2);
  const std::string html = test::read_file(dir / "rep/report.html");
  EXPECT_NE(html.find("<h2>Precision</h2>"), std::string::npos);
  // Measured after: the converted model against the original, within the budget.
  auto v = test::run_xopt({"validate", dir / "m.onnx", dir / "mixed.onnx", "--rtol", "1e-2",
                           "--json", dir / "acc.json"});
  EXPECT_EQ(v.code, 0) << v.err << v.out;
  auto acc = nlohmann::json::parse(test::read_file(dir / "acc.json"));
  EXPECT_TRUE(acc["passed"].get<bool>());
  EXPECT_LE(acc["worst"]["max_rel"].get<double>(), 1e-2);
  EXPECT_GT(acc["worst"]["max_rel"].get<double>(), 0.0) << "fp16 changes the bits";
}

TEST(PrecisionMixedCli, ValuesPastFloat16MaxStayOutOfFloat16) {
  test::TempDir dir;
  test::write_proto(dir / "m.onnx", test::parse_text_proto(kBig));
  auto r = test::run_xopt(
      {"--precision", "mixed", "--max-error", "1e-2", dir / "m.onnx", "-o", dir / "mixed.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(test::read_file(dir / "mixed.onnx")));
  for (const auto& p : m.metadata_props()) {
    if (p.key() != "xopt.precision_choice") continue;
    const auto choice = nlohmann::json::parse(p.value());
    for (const auto& n : choice["nodes"]) EXPECT_NE(n["dtype"], "float16") << n.dump();
  }
  auto bad = test::run_xopt({"--precision", "mixed", "--calibration", dir / "none", dir / "m.onnx",
                             "-o", dir / "o.onnx"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find(dir / "none"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "o.onnx"));
}

}  // namespace
}  // namespace xopt
