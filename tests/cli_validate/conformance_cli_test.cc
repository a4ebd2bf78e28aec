// xopt conformance DIR...: the per-op table of passed / failed / unsupported and the totals, the
// same text xopt-conformance prints (one library function formats both).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "ir/tensor_proto.h"
#include "tests/cli/cli_util.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

void write_tensor(const std::string& path, const ir::Tensor& t) {
  onnx::TensorProto p = ir::tensor_to_proto(t);
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(p.SerializeToOstream(&out));
}

// A node-test-style folder: test_NAME/model.onnx + test_data_set_0.
void write_case(const test::TempDir& dir, const std::string& name, const char* model,
                const ir::Tensor& x, const ir::Tensor& y) {
  fs::create_directories(dir / (name + "/test_data_set_0"));
  test::write_proto(dir / (name + "/model.onnx"), test::parse_text_proto(model));
  write_tensor(dir / (name + "/test_data_set_0/input_0.pb"), x);
  write_tensor(dir / (name + "/test_data_set_0/output_0.pb"), y);
}

constexpr const char* kNeg = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[3] x) => (float[3] y) { y = Neg(x) })";
constexpr const char* kCustom = R"(
  <ir_version: 8, opset_import: ["" : 17, "ai.custom" : 1]>
  g (float[3] x) => (float[3] y) { y = ai.custom.Frobnicate(x) })";

// Random generators: numpy's draws cannot be reproduced, so outputs are checked for type, shape
// and range; a draw outside the expected values' range fails, and the table says how it checked.
TEST(CliConformance, RandomValuesAreCheckedByTypeShapeAndRange) {
  constexpr const char* kBernoulli = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[64] x) => (float[64] y) { y = Bernoulli <seed = 1.0> (x) })";
  test::TempDir dir;
  std::vector<float> p(64), draw(64);
  for (int i = 0; i < 64; ++i) {
    p[static_cast<size_t>(i)] = static_cast<float>(i % 5) / 4.f;
    draw[static_cast<size_t>(i)] = static_cast<float>(i % 2);  // numpy's: some 0s, some 1s
  }
  const auto x = ir::Tensor::of<float>({64}, p);
  write_case(dir, "test_bernoulli", kBernoulli, x, ir::Tensor::of<float>({64}, draw));
  std::vector<float> far(64, 5.f);
  far[0] = 6.f;  // a "draw" in [5, 6]: ours (0s and 1s) must be refused
  write_case(dir, "test_bernoulli_far", kBernoulli, x, ir::Tensor::of<float>({64}, far));
  auto r = test::run_xopt({"conformance", dir.path().string(), "--details"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(
      r.out.find("1/2 passed, 1 failed (1 with random values: type, shape and range checked)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("outside the expected values' integers in [5.000000, 6.000000]"),
            std::string::npos)
      << r.out;
}

TEST(CliConformance, TableOfPassedFailedUnsupported) {
  test::TempDir dir;
  auto x = ir::Tensor::of<float>({3}, {1, -2, 3});
  write_case(dir, "test_neg", kNeg, x, ir::Tensor::of<float>({3}, {-1, 2, -3}));
  write_case(dir, "test_neg_wrong", kNeg, x, ir::Tensor::of<float>({3}, {-1, 2, 3}));
  write_case(dir, "test_custom", kCustom, x, x);
  auto r = test::run_xopt({"conformance", dir.path().string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Neg"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1/2 passed, 1 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ai.custom.Frobnicate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0/1 passed, 1 unsupported"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total: 3 cases, 1 passed, 1 failed, 1 unsupported"), std::string::npos)
      << r.out;

  auto details = test::run_xopt({"conformance", dir.path().string(), "--details"});
  EXPECT_NE(details.out.find("failed: "), std::string::npos) << details.out;
  EXPECT_NE(details.out.find("test_neg_wrong"), std::string::npos) << details.out;
  EXPECT_NE(details.out.find("no CPU kernel"), std::string::npos) << details.out;

  auto strict = test::run_xopt({"conformance", dir.path().string(), "--require-pass"});
  EXPECT_EQ(strict.code, 1);
  EXPECT_NE(strict.err.find("1 failed, 1 unsupported"), std::string::npos) << strict.err;
  auto only = test::run_xopt(
      {"conformance", dir.path().string(), "--filter", "^test_neg$", "--require-pass", "--arena"});
  EXPECT_EQ(only.code, 0) << only.out << only.err;
  EXPECT_NE(only.out.find("total: 1 cases, 1 passed"), std::string::npos) << only.out;

  auto missing = test::run_xopt({"conformance", dir / "nope"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("nope: no such folder"), std::string::npos) << missing.err;
  auto regex = test::run_xopt({"conformance", dir.path().string(), "--filter", "("});
  EXPECT_EQ(regex.code, 1);
}

// Both front ends print the same table for the same folders.
TEST(CliConformance, SameTableAsXoptConformance) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string node = shared + "/onnx-conformance/node";
  const std::vector<std::string> args = {node, "--filter", "^test_(abs|relu|add|softmax_axis_0)$"};
  std::vector<std::string> xargs = {"conformance"};
  xargs.insert(xargs.end(), args.begin(), args.end());
  auto r = test::run_xopt(xargs);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("total: 4 cases, 4 passed, 0 failed, 0 unsupported"), std::string::npos)
      << r.out;
  test::TempDir io;
  std::string cmd = std::string("'") + XOPT_CONFORMANCE_BIN + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " > '" + (io / "out") + "'";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(test::read_file(io / "out"), r.out);
}

}  // namespace
}  // namespace xopt
