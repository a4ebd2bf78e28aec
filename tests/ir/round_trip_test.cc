// Load + save must be lossless: every shared and conformance model comes back protobuf-equal.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/onnx_io.h"
#include "onnx/checker.h"
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

// The file save_model writes (initializers streamed from storage) parses back to the same proto.
TEST(RoundTrip, SavedFilesOfSharedModels) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string out = (fs::temp_directory_path() / "xopt_round_trip.onnx").string();
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    const std::string src = test::shared_model_path(name);
    auto model = ir::load_model(src);
    ASSERT_TRUE(model.is_ok());
    ASSERT_TRUE(ir::save_model(*model, out).is_ok());
    onnx::ModelProto a = test::read_proto_file(src);
    onnx::ModelProto b = test::read_proto_file(out);
    EXPECT_EQ(test::proto_diff(a, b), "");
  }
  fs::remove(out);
}

TEST(RoundTrip, ConformanceModels) {
  XOPT_REQUIRE_SHARED(shared);
  auto files = test::glob_files(shared + "/onnx-conformance", "model.onnx", 3);
  ASSERT_GT(files.size(), 1500u);
  int failures = 0;
  for (const auto& f : files) {
    std::string d = round_trip_diff(f);
    if (!d.empty() && ++failures <= 10) ADD_FAILURE() << f << ": " << d;
  }
  EXPECT_EQ(failures, 0) << "of " << files.size() << " models";
}

// libonnx's checker accepts every model after the round trip that it accepted before (1.12 does not
// know the newest opsets, so some conformance models fail it both times).
std::string checker_error(const onnx::ModelProto& m) {
  try {
    onnx::checker::check_model(m);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST(RoundTrip, CheckerAcceptsWhatItAcceptedBefore) {
  XOPT_REQUIRE_SHARED(shared);
  std::vector<std::string> files = test::glob_files(shared + "/onnx-conformance", "model.onnx", 3);
  for (const auto& name : test::shared_model_names())
    files.push_back(test::shared_model_path(name));
  int accepted = 0, regressions = 0;
  for (const auto& f : files) {
    onnx::ModelProto original = test::read_proto_file(f);
    if (!checker_error(original).empty()) continue;
    ++accepted;
    auto model = ir::load_model(f);
    ASSERT_TRUE(model.is_ok()) << f << ": " << model.status().message();
    const std::string err = checker_error(ir::model_to_proto(*model));
    if (!err.empty() && ++regressions <= 10) ADD_FAILURE() << f << ": " << err;
  }
  std::printf(
      "[ checker  ] %d of %zu models pass libonnx's checker before the round trip; %d fail "
      "after it\n",
      accepted, files.size(), regressions);
  EXPECT_GT(accepted, 500);  // 872 of 1,948 with libonnx 1.12
  EXPECT_EQ(regressions, 0);
}

}  // namespace
}  // namespace xopt
