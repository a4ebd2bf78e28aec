// xopt validate --json FILE: the accuracy report CI gates on, written whole on a pass and on a
// mismatch, and the accuracy table printed after each comparison table.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

// Six logits per row; B halves the last logit, which changes no row's top-1 or top-5 order.
constexpr const char* kA = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,6] x) => (float[2,6] y) <float[6] w = {6, 5, 4, 3, 2, 1}> {
    y = Add(x, w)
  })";
constexpr const char* kB = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,6] x) => (float[2,6] y) <float[6] w = {6, 5, 4, 3, 2, 0.5}> {
    y = Add(x, w)
  })";

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(CliValidateJson, WritesTheAccuracyReport) {
  test::TempDir dir;
  const std::string a = dir / "a.onnx", b = dir / "b.onnx", json = dir / "acc.json";
  test::write_proto(a, test::parse_text_proto(kA));
  test::write_proto(b, test::parse_text_proto(kB));
  // x in [0, 0.1): the row order is w's; B's last logit drops by 0.5.
  auto same = test::run_xopt({"validate", a, a, "--input-range", "x=0:0.1", "--json", json});
  EXPECT_EQ(same.code, 0) << same.err << same.out;
  EXPECT_NE(same.out.find("p99 abs"), std::string::npos) << same.out;
  nlohmann::json j = read_json(json);
  EXPECT_EQ(j["format"], "xopt.accuracy");
  EXPECT_TRUE(j["passed"].get<bool>());
  EXPECT_EQ(j["tables"][0]["outputs"][0]["top1"].get<double>(), 1.0);

  auto diff = test::run_xopt({"validate", a, b, "--input-range", "x=0:0.1", "--json", json});
  EXPECT_EQ(diff.code, 1) << diff.err << diff.out;
  j = read_json(json);
  EXPECT_FALSE(j["passed"].get<bool>());
  const auto& y = j["tables"][0]["outputs"][0];
  EXPECT_NEAR(y["max_abs"].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(y["top1"].get<double>(), 1.0);
  EXPECT_EQ(y["top5"].get<double>(), 1.0);
  EXPECT_EQ(y["nan"].get<int64_t>(), 0);
  EXPECT_NEAR(y["p99_abs"].get<double>(), 0.5, 1e-6);
  EXPECT_FALSE(fs::exists(json + ".tmp"));
}

TEST(CliValidateJson, UnwritableFileIsAnError) {
  test::TempDir dir;
  const std::string a = dir / "a.onnx";
  test::write_proto(a, test::parse_text_proto(kA));
  auto r = test::run_xopt({"validate", a, a, "--json", dir / "no/such/dir/acc.json"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("acc.json"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xopt
