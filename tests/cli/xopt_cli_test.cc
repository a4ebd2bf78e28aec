// xopt's command line: outputs, flags, exit codes, and that the input is never touched.
#include <nlohmann/json.hpp>

#include "ir/onnx_io.h"
#include "ir/verifier.h"
#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[N,4] x) => (float[N,4] y, int64[1] s)
     <float[4] w = {1, 2, 3, 4}, float[4] unused = {0, 0, 0, 0}> {
    a = Identity(x)
    b = Mul(a, w)
    c = Dropout(b)
    y = Relu(c)
    shape = Shape <start = 1> (x)
    s = Identity(shape)
  })";

std::string write_model(const test::TempDir& dir, const std::string& name = "model.onnx") {
  std::string path = dir / name;
  test::write_proto(path, test::parse_text_proto(kModel));
  return path;
}

int count_op(const ir::Model& m, const std::string& op) {
  int n = 0;
  for (const ir::Node* node : m.graph->nodes()) n += node->op_type() == op;
  return n;
}

TEST(Cli, CleanupWritesDefaultOutputBesideTheInput) {
  test::TempDir dir;
  std::string model = write_model(dir);
  std::string original = test::read_file(model);
  auto r = test::run_xopt({"--passes=cleanup", model});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string out = dir / "model.opt.onnx";
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("eliminate-noops"), std::string::npos) << "stats table: " << r.err;
  EXPECT_NE(r.err.find("nodes 6 -> "), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(model), original) << "input unchanged";
  auto m = ir::load_model(out);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_TRUE(ir::verify(*m->graph).is_ok());
  EXPECT_EQ(count_op(*m, "Identity"), 0);
  EXPECT_EQ(count_op(*m, "Dropout"), 0);
  EXPECT_EQ(count_op(*m, "Shape"), 0);
  EXPECT_EQ(m->graph->num_nodes(), 3u);  // Mul, Relu, Constant for the folded output s
  EXPECT_EQ(m->graph->find_value("unused"), nullptr);
  ASSERT_EQ(m->graph->outputs().size(), 2u);
  EXPECT_EQ(m->graph->outputs()[0]->name(), "y");
  EXPECT_EQ(m->graph->outputs()[1]->name(), "s");
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"model.onnx", "model.opt.onnx"}));
}

TEST(Cli, RefusesToOverwriteTheInput) {
  test::TempDir dir;
  std::string model = write_model(dir);
  std::string original = test::read_file(model);
  fs::create_directories(dir.path() / "sub");
  for (const std::string& out : {model, (dir.path() / "sub" / ".." / "model.onnx").string()}) {
    auto r = test::run_xopt({"--passes=cleanup", model, "-o", out});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("refusing to overwrite"), std::string::npos) << r.err;
    EXPECT_EQ(test::read_file(model), original);
  }
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"model.onnx", "sub"}));
}

TEST(Cli, UsageErrorsExitWithOne) {
  test::TempDir dir;
  std::string model = write_model(dir);
  const std::vector<std::vector<std::string>> cases = {
      {"--passes=cleanup,no-such-pass", model},
      {"--disable-pass=nope", model},
      {"--print-after=fold-shapes", "--passes=eliminate-noops", model},
      {"--input-shape", "x=1xx4", model},
      {"--input-shape", "no_such_input=1x4", model},
      {"--external-data", "12 parsecs", model},
      {"--min-workspace", "lots", model},
      {"--max-workspace", "-1", model},
      {"--no-such-flag", model},
      {},
  };
  for (const auto& args : cases) {
    auto r = test::run_xopt(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.code, 1) << joined << r.err;
    EXPECT_EQ(test::count_lines(r.err), 1) << joined << r.err;
    EXPECT_EQ(r.err.rfind("xopt: error: ", 0), 0u) << r.err;
  }
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"model.onnx"}));
}

TEST(Cli, UnwritableOutputLeavesNothingBehind) {
  test::TempDir dir;
  std::string model = write_model(dir);
  auto r = test::run_xopt({"--passes=cleanup", model, "-o", dir / "no/such/folder/out.onnx",
                           "--stats-json", dir / "stats.json"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no/such/folder/out.onnx"), std::string::npos) << r.err;
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"model.onnx"}));
}

TEST(Cli, ListPasses) {
  auto r = test::run_xopt({"--list-passes"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"cleanup", "eliminate-dead-code", "eliminate-noops", "fold-shapes"})
    EXPECT_NE(("\n" + r.out).find(std::string("\n") + name + " "), std::string::npos)
        << name << "\n"
        << r.out;
  EXPECT_NE(r.out.find("[eliminate-noops, fold-shapes, eliminate-dead-code]"), std::string::npos)
      << r.out;
}

TEST(Cli, HelpExitsWithZero) {
  auto r = test::run_xopt({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--passes"), std::string::npos);
}

TEST(Cli, StatsJson) {
  test::TempDir dir;
  std::string model = write_model(dir);
  auto r = test::run_xopt(
      {"--passes=cleanup", model, "-o", dir / "o.onnx", "--stats-json", dir / "stats.json", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "-q prints no table";
  auto j = nlohmann::json::parse(test::read_file(dir / "stats.json"));
  EXPECT_EQ(j["nodes_before"], 6);
  EXPECT_EQ(j["nodes_after"], 3);
  ASSERT_EQ(j["passes"].size(), 3u);
  EXPECT_EQ(j["passes"][0]["name"], "eliminate-noops");
  EXPECT_EQ(j["passes"][0]["counters"]["Identity"], 2);
  EXPECT_EQ(j["passes"][0]["counters"]["Dropout"], 1);
  EXPECT_EQ(j["passes"][1]["counters"]["Shape"], 1);
  EXPECT_EQ(j["groups"][0]["name"], "cleanup");
  EXPECT_EQ(j["groups"][0]["converged"], true);
}

TEST(Cli, BenchProfileTimesEveryNodeByOpType) {
  test::TempDir dir;
  std::string model = write_model(dir);
  auto r = test::run_xopt({"bench", model, "--batch", "2", "--warmup", "0", "--iterations", "2",
                           "--profile", "--profile-iterations", "3", "--json", dir / "b.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("profile    6 nodes"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(test::read_file(dir / "b.json"));
  ASSERT_EQ(j["profile"]["nodes"].size(), 6u);  // every node once, in execution order
  EXPECT_EQ(j["profile"]["nodes"][0]["op"], "Identity");
  EXPECT_EQ(j["profile"]["nodes"][3]["op"], "Relu");
  int nodes = 0;
  double ms = 0;
  for (const auto& op : j["profile"]["by_op"]) {
    nodes += op["nodes"].get<int>();
    ms += op["ms"].get<double>();
  }
  EXPECT_EQ(nodes, 6);  // Identity x2, Mul, Dropout, Relu, Shape
  EXPECT_NEAR(ms, j["profile"]["sum_ms"].get<double>(), 1e-9);
  EXPECT_EQ(test::run_xopt({"bench", model, "--profile-iterations", "0"}).code, 1);
}

TEST(Cli, DisablePassAndVerifyEach) {
  test::TempDir dir;
  std::string model = write_model(dir);
  auto r = test::run_xopt({"--passes=cleanup", "--disable-pass=fold-shapes,eliminate-dead-code",
                           "--verify-each", model, "-o", dir / "o.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto m = ir::load_model(dir / "o.onnx");
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(count_op(*m, "Shape"), 1);
  EXPECT_NE(m->graph->find_value("unused"), nullptr);
  EXPECT_EQ(r.err.find("fold-shapes"), std::string::npos) << r.err;
}

TEST(Cli, PrintAfterToStderrAndToAFolder) {
  test::TempDir dir;
  std::string model = write_model(dir);
  auto r = test::run_xopt(
      {"--passes=cleanup", "--print-after=eliminate-dead-code", model, "-o", dir / "o.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("// ---- after eliminate-dead-code (run 1, changed) ----"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("y = Relu("), std::string::npos) << r.err;

  r = test::run_xopt({"--passes=cleanup", "--print-after", "eliminate-noops", "--print-after",
                      "cleanup", "--print-dir", dir / "dumps", model, "-o", dir / "o2.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> dumps;
  for (const auto& e : fs::directory_iterator(dir.path() / "dumps"))
    dumps.push_back(e.path().filename().string());
  std::sort(dumps.begin(), dumps.end());
  EXPECT_EQ(dumps,
            (std::vector<std::string>{"001-eliminate-noops-1.onnx.txt",
                                      "002-eliminate-noops-2.onnx.txt", "003-cleanup-1.onnx.txt"}));
  EXPECT_NE(test::read_file(dir / "dumps/003-cleanup-1.onnx.txt").find("Relu"), std::string::npos);
}

TEST(Cli, InputShapeBindingLetsShapesFold) {
  test::TempDir dir;
  std::string model = dir / "m.onnx";
  test::write_proto(model, test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,4] x) => (int64[2] s) {
      s0 = Shape(x)
      s = Neg(s0)
    })"));
  auto r = test::run_xopt({"--passes=fold-shapes", model, "-o", dir / "unbound.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto m = ir::load_model(dir / "unbound.onnx");
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(count_op(*m, "Shape"), 1) << "N is symbolic";
  for (const auto& flag :
       std::vector<std::vector<std::string>>{{"--input-shape", "x=3x4"}, {"--batch", "3"}}) {
    auto args = flag;
    args.insert(args.end(), {"--passes=fold-shapes", model, "-o", dir / "bound.onnx"});
    r = test::run_xopt(args);
    ASSERT_EQ(r.code, 0) << r.err;
    m = ir::load_model(dir / "bound.onnx");
    ASSERT_TRUE(m.is_ok());
    EXPECT_EQ(count_op(*m, "Shape"), 0) << flag[0];
    const ir::Value* s0 = m->graph->find_value("s0");
    ASSERT_NE(s0, nullptr);
    ASSERT_TRUE(s0->is_initializer());
    EXPECT_EQ(s0->initializer()->to_int64_vector(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(m->graph->inputs()[0]->shape(), ir::Shape::of({3, 4})) << "binding is saved";
  }
}

TEST(Cli, ExternalDataThreshold) {
  test::TempDir dir;
  std::string model = write_model(dir);
  auto r = test::run_xopt(
      {"--passes=cleanup", model, "-o", dir / "ext.onnx", "--external-data", "8B", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "ext.onnx.data"));
  auto m = ir::load_model(dir / "ext.onnx");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const ir::Value* w = m->graph->find_value("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->initializer_shell().data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(w->initializer()->data<float>()[3], 4.0f);

  r = test::run_xopt(
      {"--passes=cleanup", model, "-o", dir / "inline.onnx", "--external-data", "never", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "inline.onnx.data"));
}

}  // namespace
}  // namespace xopt
