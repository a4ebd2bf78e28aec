// --input-shape NAME=MIN:MAX as a user runs it: the plan for the range, plan-info and the report
// showing the range and the arena at both ends, validate inside the range and refused outside it,
// --validate at the ends, and the flag's parsing errors (exit 1).
#include <nlohmann/json.hpp>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

constexpr const char* kWidthModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1,8,W] x) => (float[1,W,8] y) {
    a = Relu(x)
    t = Transpose<perm = [0, 2, 1]>(a)
    s = Sigmoid(t)
    y = Mul(t, s)
  })";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ShapeRangeCli, PlanForAWidthRangeThenPlanInfoAndValidate) {
  test::TempDir dir;
  const std::string model = dir / "w.onnx";
  const std::string out = dir / "w.opt.onnx";
  test::write_proto(model, test::parse_text_proto(kWidthModel));
  auto r = test::run_xopt({"--passes=fold,fuse,plan", model, "-o", out, "--input-shape",
                           "x=1x8x32:1x8x2048", "--report", dir / "rep"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "memory plan (shape range x=1x8x32:1x8x2048")) << r.err;
  EXPECT_TRUE(has(r.err, "arena at the min")) << r.err;

  // Two activations of 1x8x2048 floats at the max (a and t), 1x8x32 at the min.
  auto info = test::run_xopt({"plan-info", out});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_TRUE(has(info.out,
                  "shape range x=1x8x32:1x8x2048: arena 131072 bytes (128.00 KiB) at the "
                  "max, 2048 (2.00 KiB) at the min"))
      << info.out;
  EXPECT_TRUE(has(info.out, "  x: min 1x8x32, max 1x8x2048")) << info.out;
  auto rep = nlohmann::json::parse(test::read_file(dir / "rep/report.json"));
  EXPECT_EQ(rep["planning"]["min_arena_bytes"].get<size_t>(), 2048u);
  EXPECT_EQ(rep["planning"]["input_ranges"][0]["max"], (std::vector<int64_t>{1, 8, 2048}));

  for (const char* w : {"32", "500", "2048"}) {
    auto v = test::run_xopt({"validate", model, out, "--input-shape", std::string("x=1x8x") + w});
    EXPECT_EQ(v.code, 0) << w << ": " << v.out << v.err;
    EXPECT_TRUE(has(v.out, "[arena (its memory plan, 131072 bytes)]")) << v.out;
  }
  for (const char* w : {"2049", "16"}) {
    auto v = test::run_xopt({"validate", model, out, "--input-shape", std::string("x=1x8x") + w});
    EXPECT_EQ(v.code, 1) << v.out;
    EXPECT_TRUE(has(v.err, std::string("input 'x' has shape 1x8x") + w + ": dim 2 is " + w +
                               ", outside the memory plan's range 32..2048"))
        << v.err;
  }

  auto both = test::run_xopt({"--passes=fold,fuse,plan", model, "-o", dir / "v.onnx", "-q",
                              "--input-shape", "x=1x8x32:1x8x100:1x8x2048", "--validate"});
  EXPECT_EQ(both.code, 0) << both.out << both.err;
  EXPECT_TRUE(has(both.out, "validating at the min of the range (x=1x8x32)")) << both.out;
  EXPECT_TRUE(has(both.out, "validating at the opt of the range (x=1x8x100)")) << both.out;
  EXPECT_TRUE(has(both.out, "validating at the max of the range (x=1x8x2048)")) << both.out;
}

TEST(ShapeRangeCli, ParsingErrorsExitOne) {
  test::TempDir dir;
  const std::string model = dir / "w.onnx";
  test::write_proto(model, test::parse_text_proto(kWidthModel));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"x=1x8x64:1x8x32", "dim 2 has min 64 above max 32"},
      {"x=1x8x32:1x8", "min, opt and max must have the same rank"},
      {"x=1:2:3:4", "expected NAME=MIN:MAX or NAME=MIN:OPT:MAX"},
      {"x=1x8xa:1x8x64", "bad dimension 'a'"},
      {"x=1x8x32:1x8x4096:1x8x64", "opt 4096 outside 32..64"},
      {"nope=1x8x32:1x8x64", "the model has no input 'nope'"},
      {"x=1x4x32:1x8x32", "dimension 1 is fixed to 8 by the model"},
  };
  for (const auto& [arg, why] : cases) {
    auto r =
        test::run_xopt({"--passes=plan", model, "-o", dir / "e.onnx", "-q", "--input-shape", arg});
    EXPECT_EQ(r.code, 1) << arg << ": " << r.err;
    EXPECT_TRUE(has(r.err, why)) << arg << ": " << r.err;
  }
  auto batch = test::run_xopt({"--passes=plan", model, "-o", dir / "e.onnx", "--input-shape",
                               "x=1x8x32:1x8x64", "--batch", "2"});
  EXPECT_EQ(batch.code, 1);
  EXPECT_TRUE(has(batch.err, "--batch and a shape range exclude each other")) << batch.err;
}

}  // namespace
}  // namespace xopt
