// Every ONNX backend node test of the NN ops (../shared/onnx-conformance/node) must pass.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/kernels_nn/node_runner.h"
#include "tests/util/test_util.h"

namespace xopt::test {
namespace {

const char* const kPrefixes[] = {
    "test_conv_",      "test_basic_conv_", "test_convtranspose", "test_averagepool", "test_maxpool",
    "test_globalaveragepool", "test_globalmaxpool", "test_lrn", "test_batchnorm", "test_instancenorm",
    "test_layer_normalization", "test_gemm", "test_matmul_", "test_resize", "test_upsample"};

TEST(NnNodeTests, AllPass) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string root = shared + "/onnx-conformance/node";
  std::vector<std::string> dirs;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    for (const char* p : kPrefixes)
      if (name.rfind(p, 0) == 0 && name.find("_expanded") == std::string::npos) dirs.push_back(name);
  }
  std::sort(dirs.begin(), dirs.end());
  int passed = 0;
  std::vector<std::string> failures;
  for (const auto& d : dirs) {
    std::string err = run_node_test_dir(root + "/" + d);
    if (err.empty()) ++passed;
    else failures.push_back(d + ": " + err);
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  std::printf("NN node tests: %d / %zu passed\n", passed, dirs.size());
  EXPECT_EQ(passed, static_cast<int>(dirs.size()));
}

}  // namespace
}  // namespace xopt::test
