// Broken inputs: each gives exit code 2, a single error line naming the file (and the node where
// there is one), and leaves no output file behind.
#include <random>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

constexpr const char* kGood = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1,4] x) => (float[1,4] y)
     <float[4] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}> {
    a = Mul(x, w)
    y = Relu(a)
  })";

// Runs xopt on `model` and checks the common contract of a rejected model.
std::string expect_rejected(const test::TempDir& dir, const std::string& model) {
  auto before = dir.files();
  std::string out = dir / "out.onnx";
  auto r = test::run_xopt({"--passes=cleanup", model, "-o", out});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("xopt: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(model), std::string::npos) << "names the file: " << r.err;
  EXPECT_EQ(dir.files(), before) << "no output (or temporary) file is left";
  return r.err;
}

TEST(BadModel, TruncatedFile) {
  test::TempDir dir;
  onnx::ModelProto m = test::parse_text_proto(kGood);
  std::string bytes = m.SerializeAsString();
  test::write_file(dir / "truncated.onnx", bytes.substr(0, bytes.size() / 2));
  std::string err = expect_rejected(dir, dir / "truncated.onnx");
  EXPECT_NE(err.find("not a valid ONNX model"), std::string::npos) << err;
}

TEST(BadModel, RandomBytes) {
  test::TempDir dir;
  std::mt19937 rng(1234);
  std::string bytes(4096, '\0');
  for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
  test::write_file(dir / "random.onnx", bytes);
  std::string err = expect_rejected(dir, dir / "random.onnx");
  EXPECT_NE(err.find("not a valid ONNX model"), std::string::npos) << err;
}

TEST(BadModel, Cycle) {
  test::TempDir dir;
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) {
      a = Add(x, b)
      b = Relu(a)
      y = Neg(b)
    })");
  m.mutable_graph()->mutable_node(0)->set_name("add_in_loop");
  m.mutable_graph()->mutable_node(1)->set_name("relu_in_loop");
  test::write_proto(dir / "cycle.onnx", m);
  std::string err = expect_rejected(dir, dir / "cycle.onnx");
  EXPECT_NE(err.find("cycle"), std::string::npos) << err;
  EXPECT_TRUE(err.find("node 'add_in_loop' (Add)") != std::string::npos ||
              err.find("node 'relu_in_loop' (Relu)") != std::string::npos)
      << err;
}

TEST(BadModel, InputNoNodeProduces) {
  test::TempDir dir;
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) {
      a = Relu(x)
      y = Add(a, ghost)
    })");
  m.mutable_graph()->mutable_node(1)->set_name("the_add");
  test::write_proto(dir / "undefined.onnx", m);
  std::string err = expect_rejected(dir, dir / "undefined.onnx");
  EXPECT_NE(err.find("node 'the_add' (Add)"), std::string::npos) << err;
  EXPECT_NE(err.find("'ghost'"), std::string::npos) << err;
}

TEST(BadModel, TwoNodesWriteOneValue) {
  test::TempDir dir;
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) {
      y = Relu(x)
      y = Neg(x)
    })");
  m.mutable_graph()->mutable_node(0)->set_name("first");
  m.mutable_graph()->mutable_node(1)->set_name("second");
  test::write_proto(dir / "twice.onnx", m);
  std::string err = expect_rejected(dir, dir / "twice.onnx");
  EXPECT_NE(err.find("'y'"), std::string::npos) << err;
  EXPECT_NE(err.find("node 'second' (Neg)"), std::string::npos) << err;
}

TEST(BadModel, ExternalDataOutsideTheModelFolder) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "model");
  // The escaping file exists, so the refusal is about the path, not a missing file.
  test::write_file(dir / "secret.bin", std::string(16, '\x01'));
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) <float[4] w = {0, 0, 0, 0}> {
      y = Mul(x, w)
    })");
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("../secret.bin");
  std::string model = (dir.path() / "model" / "escape.onnx").string();
  test::write_proto(model, m);
  auto r = test::run_xopt({"--passes=cleanup", model});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(model), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'w'"), std::string::npos) << "names the initializer: " << r.err;
  EXPECT_NE(r.err.find(".."), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "model" / "escape.opt.onnx"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() / "model"),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(BadModel, MissingFile) {
  test::TempDir dir;
  auto r = test::run_xopt({dir / "nope.onnx"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(dir / "nope.onnx"), std::string::npos) << r.err;
  EXPECT_TRUE(dir.files().empty());
}

}  // namespace
}  // namespace xopt
