// The fuzzers' findings stay fixed: each file in fuzz/regressions/HARNESS/ (an input that once
// crashed, leaked or hung that harness) and each seed in fuzz/seeds/HARNESS/ runs through the
// harness; a crash or sanitizer report fails the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int xopt_fuzz_model_one(const uint8_t* data, size_t size);
extern "C" int xopt_fuzz_text_one(const uint8_t* data, size_t size);
extern "C" int xopt_fuzz_plan_one(const uint8_t* data, size_t size);
extern "C" int xopt_fuzz_image_one(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

int run_all(const std::string& harness, int (*one)(const uint8_t*, size_t)) {
  int n = 0;
  for (const char* kind : {"regressions", "seeds"}) {
    const fs::path dir = fs::path(XOPT_SOURCE_DIR) / "fuzz" / kind / harness;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      SCOPED_TRACE(e.path().string());
      std::ifstream f(e.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
      EXPECT_EQ(one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
      ++n;
    }
  }
  return n;
}

TEST(FuzzRegressions, Model) {
  EXPECT_GT(run_all("model", xopt_fuzz_model_one), 0);
}
TEST(FuzzRegressions, Text) {
  EXPECT_GT(run_all("text", xopt_fuzz_text_one), 0);
}
TEST(FuzzRegressions, Plan) {
  EXPECT_GT(run_all("plan", xopt_fuzz_plan_one), 0);
}
TEST(FuzzRegressions, Image) {
  EXPECT_GT(run_all("image", xopt_fuzz_image_one), 0);
}

}  // namespace
