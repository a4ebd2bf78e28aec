// Models with sequence values as a user runs them: --passes=fold,fuse,plan --validate plans the
// tensors around the sequences (which live outside the arena, planner/README.md) and the optimized
// model computes what the original does inside its plan; plan-info reads the plan back.
#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

constexpr const char* kSplitConcat = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4,6] x) => (float[2,4,6] y, float[2,6] z) {
    a = Relu(x)
    two = Constant <value = int64 {2}> ()
    s = SplitToSequence <axis = 2> (a, two)
    c = ConcatFromSequence <axis = 2> (s)
    y = Sigmoid(c)
    rows = SplitToSequence <axis = 1, keepdims = 0> (x)
    zero = Constant <value = int64 {0}> ()
    r0 = SequenceAt(rows, zero)
    last = Constant <value = int64 {-1}> ()
    r3 = SequenceAt(rows, last)
    z = Add(r0, r3)
  })";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SequenceCli, FoldFusePlanValidate) {
  test::TempDir dir;
  const std::string model = dir / "seq.onnx";
  const std::string out = dir / "seq.opt.onnx";
  test::write_proto(model, test::parse_text_proto(kSplitConcat));
  auto r = test::run_xopt({"--passes=fold,fuse,plan", model, "-o", out, "--validate"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "validation passed: 2 outputs")) << r.out << r.err;
  auto info = test::run_xopt({"plan-info", out});
  ASSERT_EQ(info.code, 0) << info.err;
  // The tensors a, c, r0 and r3 are planned (y and z are graph outputs); the sequences are not.
  EXPECT_TRUE(has(info.out, "8 nodes, 4 values")) << info.out;
  auto v = test::run_xopt({"validate", model, out});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

}  // namespace
}  // namespace xopt
