// xopt --precision: convert-precision runs before plan-memory without being named, the plan and
// report.json say the precision, the output is fp16 inside with fp32 inputs and outputs, and bad
// flags are usage errors naming the flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[8,64] x) => (float[8,64] y) {
    a = Relu(x)
    b = Sigmoid(a)
    y = Tanh(b)
  })";

TEST(PrecisionCli, Fp16PlansInTheNewSizes) {
  test::TempDir dir;
  test::write_proto(dir / "m.onnx", test::parse_text_proto(kModel));
  auto fp32 = test::run_xopt(
      {"--passes=plan", dir / "m.onnx", "-o", dir / "fp32.onnx", "--report", dir / "r32"});
  ASSERT_EQ(fp32.code, 0) << fp32.err;
  auto r = test::run_xopt({"--passes=plan", "--precision", "fp16", dir / "m.onnx", "-o",
                           dir / "fp16.onnx", "--report", dir / "r16"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("convert-precision"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fp16: 3 nodes converted, 0 kept fp32"), std::string::npos) << r.err;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(test::read_file(dir / "fp16.onnx")));
  EXPECT_EQ(m.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  int casts = 0;
  for (const auto& n : m.graph().node()) casts += n.op_type() == "Cast";
  EXPECT_EQ(casts, 2);
  auto j32 = nlohmann::json::parse(test::read_file(dir / "r32/report.json"));
  auto j16 = nlohmann::json::parse(test::read_file(dir / "r16/report.json"));
  EXPECT_FALSE(j32.contains("precision"));
  EXPECT_EQ(j16["precision"]["mode"], "fp16");
  EXPECT_EQ(j16["precision"]["nodes"]["float16"], 3);
  EXPECT_EQ(j16["planning"]["arena_bytes"].get<double>() * 2,
            j32["planning"]["arena_bytes"].get<double>());
  EXPECT_NE(r.err.find("memory plan (input shapes as given, fp16"), std::string::npos) << r.err;
}

// A model that came with external data keeps its weights external after conversion: every weight
// convert-precision writes is a new tensor, and the default policy ("external when the input
// was") follows the model, not the tensors left from the file.
TEST(PrecisionCli, ExternalWeightsStayExternalConverted) {
  test::TempDir dir;
  std::string values;
  for (int i = 0; i < 64 * 64; ++i) values += (i ? "," : "") + std::to_string((i % 7) * 0.25);
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8,64] x) => (float[8,64] y) <float[64,64] w = {)" +
                           values + R"(}> {
      y = MatMul(x, w)
    })";
  test::write_proto(dir / "m.onnx", test::parse_text_proto(text));
  auto ext = test::run_xopt(
      {"--passes=cleanup", dir / "m.onnx", "-o", dir / "ext.onnx", "--external-data", "1KiB"});
  ASSERT_EQ(ext.code, 0) << ext.err;
  ASSERT_TRUE(fs::exists(dir / "ext.onnx.data"));
  auto r = test::run_xopt(
      {"--passes=plan", "--precision", "fp16", dir / "ext.onnx", "-o", dir / "fp16.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir / "fp16.onnx.data")) << "the converted weight went inline";
  EXPECT_EQ(fs::file_size(dir / "fp16.onnx.data"), 64u * 64u * 2u);
  EXPECT_LT(fs::file_size(dir / "fp16.onnx"), 2048u);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(test::read_file(dir / "fp16.onnx")));
  ASSERT_EQ(m.graph().initializer_size(), 1);
  EXPECT_EQ(m.graph().initializer(0).data_type(), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(m.graph().initializer(0).data_location(), onnx::TensorProto::EXTERNAL);
}

TEST(PrecisionCli, BadFlagsAreUsageErrors) {
  test::TempDir dir;
  test::write_proto(dir / "m.onnx", test::parse_text_proto(kModel));
  auto bad = test::run_xopt({"--precision", "fp8", dir / "m.onnx", "-o", dir / "o.onnx"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE((bad.out + bad.err).find("--precision"), std::string::npos) << bad.err;
  auto regex = test::run_xopt(
      {"--precision", "fp16", "--keep-fp32", "/[/", dir / "m.onnx", "-o", dir / "o.onnx"});
  EXPECT_NE(regex.code, 0);
  EXPECT_NE(regex.err.find("--keep-fp32 '/[/'"), std::string::npos) << regex.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "o.onnx"));
  // --precision mixed has its chooser (tests/cli/precision_mixed_cli_test.cc).
}

}  // namespace
}  // namespace xopt
