// Load + save must be lossless: every shared and conformance model comes back protobuf-equal.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/onnx_io.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

std::string round_trip_diff(const std::string& path) {
  onnx::ModelProto original = test::read_proto_file(path);
  auto model = ir::load_model(path);
  if (!model.is_ok()) return "load failed: " + model.status().message();
  onnx::ModelProto saved = ir::model_to_proto(*model);
  std::string base = fs::path(path).parent_path().string();
  test::canonicalize(original, base);
  test::canonicalize(saved, base);
  return test::proto_diff(original, saved);
}

TEST(RoundTrip, SharedModels) {
  XOPT_REQUIRE_SHARED(shared);
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(round_trip_diff(test::shared_model_path(name)), "");
  }
}

TEST(RoundTrip, ConformanceModels) {
  XOPT_REQUIRE_SHARED(shared);
  auto files = test::glob_files(shared + "/onnx-conformance", "model.onnx", 3);
  for (const auto& f : test::glob_files(shared + "/onnx-conformance/light", "", 0)) (void)f;
  ASSERT_GT(files.size(), 1500u);
  int failures = 0;
  for (const auto& f : files) {
    std::string d = round_trip_diff(f);
    if (!d.empty() && ++failures <= 10) ADD_FAILURE() << f << ": " << d;
  }
  EXPECT_EQ(failures, 0) << "of " << files.size() << " models";
}

}  // namespace
}  // namespace xopt
