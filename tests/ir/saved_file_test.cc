// The file save_model writes (initializers streamed straight from their storage) parses back to the
// proto model_to_proto builds in memory. Typed int64 initializers (shape constants) were written
// empty while counted in the lengths, so the saved file did not parse (found checking the hostile
// 10^9-element ConstantOfShape model's output, issue 15; the model fuzzer now reloads what it
// saves).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "ir/onnx_io.h"
#include "ir/text.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

std::string saved_file_diff(const ir::Model& model) {
  const std::string out =
      (fs::temp_directory_path() / ("xopt_saved_file." + std::to_string(getpid()) + ".onnx"))
          .string();
  ir::SaveOptions options;
  options.external = ir::SaveOptions::External::kNever;
  Status st = ir::save_model(model, out, options);
  if (!st.is_ok()) return "save failed: " + st.message();
  std::ifstream in(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::ModelProto back;
  const bool parsed = back.ParseFromString(bytes);
  fs::remove(out);
  if (!parsed) return "the saved file does not parse";
  return test::proto_diff(ir::model_to_proto(model), back);
}

TEST(SavedFile, TypedIntegerInitializers) {
  auto m = ir::parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[6] x) => (float[2,3] y)
       <int64[2] s = {2, 3}, int32[2] i = {-1, 70000}, float[1] f = {1.5}> {
      r = Reshape(x, s)
      y = Mul(r, f)
    })");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(saved_file_diff(*m), "");
}

TEST(SavedFile, ConformanceModels) {
  XOPT_REQUIRE_SHARED(shared);
  auto files = test::glob_files(shared + "/onnx-conformance", "model.onnx", 3);
  ASSERT_GT(files.size(), 1500u);
  int failures = 0;
  for (const auto& f : files) {
    auto model = ir::load_model(f);
    if (!model.is_ok()) continue;  // RoundTrip.ConformanceModels covers loading
    std::string d = saved_file_diff(*model);
    if (!d.empty() && ++failures <= 10) ADD_FAILURE() << f << ": " << d;
  }
  EXPECT_EQ(failures, 0) << "of " << files.size() << " models";
}

}  // namespace
}  // namespace xopt
