// xopt validate A [B] and xopt --validate: inputs from data sets, files or seeded random values;
// the table; the exit status; and bad input reported as one clear line.
#include <filesystem>
#include <fstream>

#include "ir/tensor_proto.h"
#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

// y = Relu(x * w), w = [1, 2, 3, 4].
constexpr const char* kRelu = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4] x) => (float[2,4] y) <float[4] w = {1, 2, 3, 4}> {
    a = Mul(x, w)
    y = Relu(a)
  })";
// The same function written differently (and with a no-op Identity).
constexpr const char* kReluSwapped = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4] x) => (float[2,4] y) <float[4] w = {1, 2, 3, 4}> {
    i = Identity(x)
    a = Mul(w, i)
    y = Relu(a)
  })";
// Differs from kRelu only where x < 0 (no Relu).
constexpr const char* kNoRelu = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4] x) => (float[2,4] y) <float[4] w = {1, 2, 3, 4}> {
    y = Mul(x, w)
  })";

void write_tensor(const std::string& path, const ir::Tensor& t, const std::string& name = "") {
  onnx::TensorProto p = ir::tensor_to_proto(t);
  p.set_name(name);
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(p.SerializeToOstream(&out));
}

std::string write_model(const test::TempDir& dir, const std::string& name, const char* text) {
  std::string path = dir / name;
  test::write_proto(path, test::parse_text_proto(text));
  return path;
}

const std::vector<float> kX = {1, -2, 3, -4, 0.5f, 0.25f, -1, 2};
std::vector<float> relu_of(const std::vector<float>& x) {
  std::vector<float> y;
  for (size_t i = 0; i < x.size(); ++i) y.push_back(std::max(0.0f, x[i] * float(i % 4 + 1)));
  return y;
}

// model.onnx + test_data_set_0 with the hand-computed expected output, `delta` added to y[2].
std::string model_with_data(const test::TempDir& dir, float delta) {
  std::string model = write_model(dir, "model.onnx", kRelu);
  fs::create_directories(dir / "test_data_set_0");
  write_tensor(dir / "test_data_set_0/input_0.pb", ir::Tensor::of<float>({2, 4}, kX), "x");
  std::vector<float> y = relu_of(kX);
  y[2] += delta;
  write_tensor(dir / "test_data_set_0/output_0.pb", ir::Tensor::of<float>({2, 4}, y), "y");
  return model;
}

TEST(CliValidate, OneModelAgainstItsStoredOutputs) {
  test::TempDir dir;
  std::string model = model_with_data(dir, 0.0f);
  auto r = test::run_xopt({"validate", model});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("inputs: " + (dir / "test_data_set_0")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("against the stored outputs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max abs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cosine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float[2,4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.0000000"), std::string::npos) << "cosine 1: " << r.out;
  EXPECT_NE(r.out.find("validation passed: 1 outputs in 1 data set"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliValidate, MismatchExitsOneWithTheFigures) {
  test::TempDir dir;
  // y[2] = 9 in truth; 9.5 stored: max abs 0.5, max |ref| 9.5 -> max rel 0.5/9.5.
  std::string model = model_with_data(dir, 0.5f);
  auto r = test::run_xopt({"validate", model});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5.000e-01"), std::string::npos) << "max abs: " << r.out;
  EXPECT_NE(r.out.find("5.263e-02"), std::string::npos) << "max rel: " << r.out;
  EXPECT_NE(r.out.find("worst at [2]"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("validation failed: 1 of 1 outputs outside tolerance"), std::string::npos)
      << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
  // The same difference is within a looser tolerance: 0.5 <= 0 + 0.06 * 9.5.
  auto loose = test::run_xopt({"validate", model, "--rtol", "0.06", "--atol", "0"});
  EXPECT_EQ(loose.code, 0) << loose.err << loose.out;
  auto tight = test::run_xopt({"validate", model, "--rtol", "0.05", "--atol", "0"});
  EXPECT_EQ(tight.code, 1) << tight.out;
}

TEST(CliValidate, TwoModelsOnRandomInputs) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", kRelu);
  std::string b = write_model(dir, "b.onnx", kReluSwapped);
  auto r = test::run_xopt({"validate", a, b});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("random inputs (seed 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input x: float[2,4] random [-1, 1) (default)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(b + " [simple] against " + a + " [simple]"), std::string::npos) << r.out;

  // Random inputs include negatives, where the model without Relu differs.
  std::string c = write_model(dir, "c.onnx", kNoRelu);
  auto bad = test::run_xopt({"validate", a, c});
  EXPECT_EQ(bad.code, 1) << bad.err << bad.out;
  EXPECT_NE(bad.out.find("MISMATCH"), std::string::npos) << bad.out;
  // Only positive inputs: the two agree.
  auto pos = test::run_xopt({"validate", a, c, "--input-range", "x=0:1"});
  EXPECT_EQ(pos.code, 0) << pos.err << pos.out;
  EXPECT_NE(pos.out.find("random [0, 1) (given)"), std::string::npos) << pos.out;
}

TEST(CliValidate, SeedsAreDeterministic) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", kRelu);
  std::string c = write_model(dir, "c.onnx", kNoRelu);
  auto r1 = test::run_xopt({"validate", a, c, "--seed", "5"});
  auto r2 = test::run_xopt({"validate", a, c, "--seed", "5"});
  auto r3 = test::run_xopt({"validate", a, c, "--seed", "6"});
  EXPECT_EQ(r1.code, 1);
  EXPECT_EQ(r1.out, r2.out) << "same seed, same inputs, same figures";
  EXPECT_NE(r1.out, r3.out) << "another seed, other inputs";
  EXPECT_NE(r3.out.find("random inputs (seed 6)"), std::string::npos) << r3.out;
}

TEST(CliValidate, InputFromATensorFile) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", kRelu);
  std::string c = write_model(dir, "c.onnx", kNoRelu);
  std::string pos = dir / "pos.pb";
  write_tensor(pos, ir::Tensor::of<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  auto r = test::run_xopt({"validate", a, c, "--input", "x=" + pos});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("input x: from file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("given inputs"), std::string::npos) << r.out;
  std::string neg = dir / "neg.pb";
  write_tensor(neg, ir::Tensor::of<float>({2, 4}, kX));
  EXPECT_EQ(test::run_xopt({"validate", a, c, "--input", "x=" + neg}).code, 1);
}

TEST(CliValidate, IdsThatIndexAGatherStayValid) {
  test::TempDir dir;
  std::string m = write_model(dir, "ids.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[3,5] ids) => (float[3,5,2] e)
      <float[10,2] table = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}> {
      e = Gather(table, ids)
    })");
  auto r = test::run_xopt({"validate", m, m, "--seed", "1"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("input ids: int64[3,5] random 0..9 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("indexes a dim of 10"), std::string::npos) << r.out;
  // A range past the table is used as given, and the Gather says what is wrong.
  auto bad = test::run_xopt({"validate", m, m, "--input-range", "ids=100:200"});
  EXPECT_NE(bad.code, 0) << bad.out;
  EXPECT_NE(bad.err.find("Gather"), std::string::npos) << bad.err;
  EXPECT_EQ(test::count_lines(bad.err), 1) << bad.err;
  auto typo = test::run_xopt({"validate", m, m, "--input-range", "idz=0:1"});
  EXPECT_EQ(typo.code, 1);
  EXPECT_NE(typo.err.find("'idz' is not an input"), std::string::npos) << typo.err;
  auto syntax = test::run_xopt({"validate", m, m, "--input-range", "ids=5"});
  EXPECT_EQ(syntax.code, 1);
  EXPECT_NE(syntax.err.find("LO:HI"), std::string::npos) << syntax.err;
}

TEST(CliValidate, ExplicitDataFolder) {
  test::TempDir dir;
  model_with_data(dir, 0.0f);
  std::string other = write_model(dir, "elsewhere.onnx", kReluSwapped);
  fs::create_directories(dir / "sub");
  std::string copy = dir / "sub/m.onnx";
  fs::copy_file(dir / "model.onnx", copy);
  // Nothing beside sub/m.onnx: one model needs --data.
  auto none = test::run_xopt({"validate", copy, "--random-inputs"});
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("no expected outputs"), std::string::npos) << none.err;
  auto r = test::run_xopt({"validate", copy, "--data", dir / "test_data_set_0"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  auto two = test::run_xopt({"validate", copy, other, "--data", dir.path().string()});
  EXPECT_EQ(two.code, 0) << two.err << two.out;
  EXPECT_NE(two.out.find("test_data_set_0: "), std::string::npos) << two.out;
  auto missing = test::run_xopt({"validate", copy, "--data", dir / "nope"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("nope"), std::string::npos) << missing.err;
}

// Bad input: a clear one-line error naming the input or node, a non-zero exit, no crash.
TEST(CliValidateErrors, MissingInputIsNamed) {
  test::TempDir dir;
  std::string m = write_model(dir, "two.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] a, float[2] b) => (float[2] y) { y = Add(a, b) })");
  fs::create_directories(dir / "test_data_set_0");
  write_tensor(dir / "test_data_set_0/input_0.pb", ir::Tensor::of<float>({2}, {1, 2}), "a");
  write_tensor(dir / "test_data_set_0/output_0.pb", ir::Tensor::of<float>({2}, {1, 2}), "y");
  auto r = test::run_xopt({"validate", m});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("input 'b' is not given"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(m), std::string::npos) << "names the model: " << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
}

TEST(CliValidateErrors, WrongShapeOrDtypeIsNamed) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", kRelu);
  std::string shape = dir / "shape.pb";
  write_tensor(shape, ir::Tensor::of<float>({4, 2}, kX));
  auto r = test::run_xopt({"validate", a, a, "--input", "x=" + shape});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("input 'x' has shape [4,2]"), std::string::npos) << r.err;
  std::string dtype = dir / "dtype.pb";
  write_tensor(dtype, ir::Tensor::of<int64_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  auto d = test::run_xopt({"validate", a, a, "--input", "x=" + dtype});
  EXPECT_EQ(d.code, 1) << d.out;
  EXPECT_NE(d.err.find("input 'x' is int64 but the graph declares float"), std::string::npos)
      << d.err;
  auto unknown = test::run_xopt({"validate", a, a, "--input", "y=" + dtype});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("'y' is not an input of the graph"), std::string::npos) << unknown.err;
  auto nofile = test::run_xopt({"validate", a, a, "--input", "x=" + (dir / "none.pb")});
  EXPECT_NE(nofile.code, 0);
  EXPECT_NE(nofile.err.find("none.pb"), std::string::npos) << nofile.err;
  auto junk = dir / "junk.pb";
  test::write_file(junk, "\xff\xff\xff not a tensor");
  auto j = test::run_xopt({"validate", a, a, "--input", "x=" + junk});
  EXPECT_NE(j.code, 0);
  EXPECT_NE(j.err.find("junk.pb"), std::string::npos) << j.err;
}

TEST(CliValidateErrors, OpWithoutKernelNamesTheNode) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", kRelu);
  std::string b = write_model(dir, "b.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17, "ai.custom" : 1]>
    g (float[2,4] x) => (float[2,4] y) {
      y = ai.custom.Frobnicate <alpha = 1.0> (x)
    })");
  auto r = test::run_xopt({"validate", a, b});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("Frobnicate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no CPU kernel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(b), std::string::npos) << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
}

TEST(CliValidateErrors, UsageErrors) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", kRelu);
  EXPECT_EQ(test::run_xopt({"validate"}).code, 1);
  EXPECT_EQ(test::run_xopt({"validate", a, a, a}).code, 1);
  auto missing = test::run_xopt({"validate", dir / "none.onnx", a});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("none.onnx"), std::string::npos) << missing.err;
  auto neg = test::run_xopt({"validate", a, a, "--rtol", "-1"});
  EXPECT_EQ(neg.code, 1);
}

TEST(CliOptimizeValidate, WritesAndValidatesTheOptimizedModel) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", kReluSwapped);
  std::string out = dir / "a.opt.onnx";
  auto r = test::run_xopt({"--passes=cleanup", "--validate", a, "-o", out, "-q"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(out + " (optimized) [simple] against " + a + " (original) [simple]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("validation passed"), std::string::npos) << r.out;
  // Without --validate nothing is run.
  auto plain = test::run_xopt({"--passes=cleanup", a, "-o", out, "-q"});
  EXPECT_EQ(plain.code, 0);
  EXPECT_EQ(plain.out.find("validation"), std::string::npos) << plain.out;
}

TEST(CliOptimizeValidate, SymbolicInputsFollowTheBinding) {
  test::TempDir dir;
  std::string a = write_model(dir, "a.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,4] x) => (float[N,4] y) <float[4] w = {1, 2, 3, 4}> {
      i = Identity(x)
      y = Mul(i, w)
    })");
  auto r = test::run_xopt({"--passes=cleanup", "--batch", "3", "--validate", a, "-o",
                           dir / "o.onnx", "-q", "--seed", "2"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("input x: float[3,4] random"), std::string::npos) << r.out;
  // The optimized model declares x as [3,4]: random inputs take B's bound dims, so they fit both.
  auto bound = test::run_xopt({"validate", a, dir / "o.onnx"});
  ASSERT_EQ(bound.code, 0) << bound.err << bound.out;
  EXPECT_NE(bound.out.find("input x: float[3,4] random"), std::string::npos) << bound.out;
  auto v = test::run_xopt({"validate", a, a, "--input-shape", "x=5x4"});
  ASSERT_EQ(v.code, 0) << v.err << v.out;
  EXPECT_NE(v.out.find("input x: float[5,4] random"), std::string::npos) << v.out;
}

}  // namespace
}  // namespace xopt
