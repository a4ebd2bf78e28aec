// xopt's planning flags as a user runs them: --max-batch on resnet18, plan-info on the result,
// --report DIR, and the refusals.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/util/test_util.h"

namespace {

namespace fs = std::filesystem;

struct XRun {
  int code = -1;
  std::string out;  // stdout and stderr together
};

XRun xopt(const std::string& args) {
  XRun r;
  const std::string cmd = std::string(XOPT_BIN) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("xopt_plan_cli_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(PlanCli, MaxBatchOnResnet18ThenPlanInfo) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string model = xopt::test::shared_model_path("resnet18");
  const fs::path dir = temp_dir("maxbatch");
  const std::string out = (dir / "r.opt.onnx").string();
  XRun r = xopt("--passes=fold,fuse,plan --max-batch 24GiB " + model + " -o " + out + " --report " +
                (dir / "rep").string());
  std::printf("%s", r.out.c_str());
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t at = r.out.find("max batch: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const long long batch = std::stoll(r.out.substr(at + 11));
  EXPECT_GT(batch, 1);
  EXPECT_NE(r.out.find("batch " + std::to_string(batch + 1) + " needs"), std::string::npos);
  EXPECT_NE(r.out.find("CUDA context (estimate)"), std::string::npos);

  std::ifstream rep(dir / "rep" / "report.json");
  ASSERT_TRUE(rep.good());
  nlohmann::json j = nlohmann::json::parse(rep);
  // The budget holds every device bucket (the I/O region too) and the context.
  const auto& d = j["breakdown"]["device"];
  EXPECT_TRUE(d["cuda_context"]["estimated"].get<bool>());
  const size_t total = d["total_with_context"]["bytes"].get<size_t>();
  EXPECT_LE(total, size_t{24} << 30);
  EXPECT_GT(d["io"]["bytes"].get<size_t>(), 0u);
  EXPECT_GT(d["activations"]["bytes"].get<size_t>(), 0u);

  XRun info = xopt("plan-info " + out);
  std::printf("%s", info.out.c_str());
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_NE(info.out.find("arena "), std::string::npos);
  EXPECT_NE(info.out.find("batch " + std::to_string(batch)), std::string::npos) << info.out;
  XRun values = xopt("plan-info --values " + out);
  ASSERT_EQ(values.code, 0);
  EXPECT_GT(values.out.size(), info.out.size());
  fs::remove_all(dir);
}

TEST(PlanCli, RefusalsAndUsageErrors) {
  const fs::path dir = temp_dir("usage");
  // An unplanned model: plan-info says there is no plan.
  XOPT_REQUIRE_SHARED(shared);
  const std::string resnet = xopt::test::shared_model_path("resnet18");
  XRun r = xopt("plan-info " + resnet);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("xopt: error:"), std::string::npos) << r.out;
  r = xopt("--passes=cleanup --max-batch 1GiB " + resnet + " -o " + (dir / "o.onnx").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("plan-memory"), std::string::npos) << r.out;
  r = xopt("--passes=plan --max-batch 24XB " + resnet + " -o " + (dir / "o.onnx").string());
  EXPECT_EQ(r.code, 1) << r.out;
  r = xopt("--passes=plan --align 100 " + resnet + " -o " + (dir / "o.onnx").string());
  EXPECT_EQ(r.code, 1) << r.out;
  r = xopt("--passes=plan --align 4096 --io-in-arena " + resnet + " -o " +
           (dir / "o.onnx").string());
  EXPECT_EQ(r.code, 0) << r.out;
  XRun info = xopt("plan-info " + (dir / "o.onnx").string());
  EXPECT_NE(info.out.find("alignment 4096, inputs/outputs in the arena"), std::string::npos)
      << info.out;
  fs::remove_all(dir);
}

}  // namespace
