// fold-shapes: Shape/Size of statically known dims become constants.
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(FoldShapes, ShapeAndSizeOfStaticValues) {
  EXPECT_REWRITES_EXACTLY("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[6,4] y, int64 n) <int64[1] minus1 = {-1}> {
      s = Shape(x)
      tail = Shape <start = -1> (x)
      sz = Size(x)
      flat = Concat <axis = 0> (minus1, tail)
      y = Reshape(x, flat)
      n = Mul(sz, sz)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[6,4] y, int64 n)
       <int64[1] minus1 = {-1}, int64[3] s = {2, 3, 4}, int64[1] tail = {4}, int64 sz = {24}> {
      flat = Concat <axis = 0> (minus1, tail)
      y = Reshape(x, flat)
      n = Mul(sz, sz)
    })");
}

// Only the dims Shape reads must be known: start=1 skips the symbolic batch.
TEST(FoldShapes, ShapeSliceAvoidsSymbolicDims) {
  EXPECT_REWRITES_EXACTLY("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,4] x) => (int64[2] y) {
      s = Shape <start = 1, end = 10> (x)
      y = Neg(s)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,4] x) => (int64[2] y) <int64[2] s = {3, 4}> {
      y = Neg(s)
    })");
}

// A folded graph output stays a node result with the same name: a Constant.
TEST(FoldShapes, GraphOutputBecomesConstantNode) {
  auto r = test::run_pipeline("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,5] x) => (int64[2] s) {
      s = Shape(x)
    })");
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_TRUE(r.changed);
  ir::Model expected = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,5] x) => (int64[2] s) {
      s = Constant <value = int64[2] {2, 5}> ()
    })");
  EXPECT_EQ(r.text, ir::print_graph_text(expected));
}

TEST(FoldShapes, SymbolicDimsStay) {
  EXPECT_NOT_APPLIED("fold-shapes", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] x) => (int64[2] s, int64 n, int64[1] f) {
      s = Shape(x)
      n = Size(x)
      f = Shape <end = 1> (x)
    })");
}

}  // namespace
}  // namespace xopt
