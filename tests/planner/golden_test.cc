// Golden plans for small graphs written in ONNX text (shapes of intermediate values set by hand,
// since the text form has no value_info). plan_to_text keeps them readable.
#include <gtest/gtest.h>

#include "planner/plan_text.h"
#include "planner/planner.h"
#include "planner/reorder.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::parse_with_shapes;

std::string plan_text(const ir::Model& m, const PlanOptions& opt = {}) {
  auto p = plan(*m.graph, opt);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return p.is_ok() ? plan_to_text(*p) : "";
}

// Conv -> Relu -> Reshape -> MatMul: Relu runs in place over the Conv output (which dies there),
// the Reshape is a view, and the Conv needs an im2col buffer of 3*3*3 x 8*8 floats.
constexpr const char* kConvNet = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  convnet (float[1,3,8,8] x, float[4,3,3,3] w, float[256,10] fc, int64[2] shape) => (float[1,10] y) {
    c = Conv <pads = [1,1,1,1]> (x, w)
    r = Relu (c)
    f = Reshape (r, shape)
    y = MatMul (f, fc)
  }
)";

TEST(Golden, ConvReluReshapeMatMul) {
  auto m = parse_with_shapes(kConvNet, {{"c", {1, 4, 8, 8}}, {"r", {1, 4, 8, 8}}, {"f", {1, 256}}});
  EXPECT_EQ(
      plan_text(m),
      R"(plan: arena=1024 lower_bound=1024 naive=3072 strategy=greedy-by-size align=256 optimal workspace=6912
order: @c @r @f @y
value    offset      size     bytes  steps
c             0      1024      1024  0..3
r             0      1024      1024  1..2 in-place c
f             0      1024      1024  2..3 view r
)");
}

TEST(Golden, ConvNetWithInputsAndOutputsInTheArena) {
  auto m = parse_with_shapes(kConvNet, {{"c", {1, 4, 8, 8}}, {"r", {1, 4, 8, 8}}, {"f", {1, 256}}});
  PlanOptions opt;
  opt.io_in_arena = true;
  opt.workspace = false;
  // x (768 B), w (432 B), fc (10240 B) and shape live from step -1; y (40 B) lives to the end. The
  // peak is step 0: fc + c + x + w + shape. y fits where x was.
  EXPECT_EQ(
      plan_text(m, opt),
      R"(plan: arena=12800 lower_bound=12800 naive=15104 strategy=greedy-by-size align=256 io_in_arena optimal
order: @c @r @f @y
value    offset      size     bytes  steps
x         11264       768       768  -1..0 input
w         12032       512       432  -1..0 input
fc            0     10240     10240  -1..3 input
shape     12544       256        16  -1..2 input
c         10240      1024      1024  0..3
r         10240      1024      1024  1..2 in-place c
f         10240      1024      1024  2..3 view r
y         11264       256        40  3..3 output
)");
}

// A chain of transposes: no aliasing is possible, and the third output reuses the first's bytes.
TEST(Golden, TransposeChainReusesDeadBuffers) {
  auto m = parse_with_shapes(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    chain (float[4,64] x) => (float[64,4] y) {
      t1 = Transpose (x)
      t2 = Transpose (t1)
      t3 = Transpose (t2)
      y = Transpose (t3)
    }
  )",
                             {{"t1", {64, 4}}, {"t2", {4, 64}}, {"t3", {64, 4}}});
  EXPECT_EQ(
      plan_text(m),
      R"(plan: arena=2048 lower_bound=2048 naive=3072 strategy=greedy-by-size align=256 optimal
order: @t1 @t2 @t3 @y
value    offset      size     bytes  steps
t1            0      1024      1024  0..1
t2         1024      1024      1024  1..2
t3            0      1024      1024  2..3
)");
}

// A diamond: `a` feeds both branches, so Sigmoid(a) cannot overwrite it; the Add reuses `a` once
// both branches have read it, and Sigmoid(b) reuses `b`.
TEST(Golden, DiamondInPlaceOnlyWhereTheInputDies) {
  auto m = parse_with_shapes(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    diamond (float[1,256] x) => (float[1,256] y) {
      a = Sigmoid (x)
      b = Sigmoid (a)
      c = Sigmoid (b)
      d = Add (a, c)
      y = Relu (d)
    }
  )",
                             {{"a", {1, 256}}, {"b", {1, 256}}, {"c", {1, 256}}, {"d", {1, 256}}});
  EXPECT_EQ(
      plan_text(m),
      R"(plan: arena=2048 lower_bound=2048 naive=4096 strategy=greedy-by-size align=256 optimal
order: @a @b @c @d @y
value    offset      size     bytes  steps
a             0      1024      1024  0..4
b          1024      1024      1024  1..3
c          1024      1024      1024  2..3 in-place b
d             0      1024      1024  3..4 in-place a
)");
}

// Two branches from one input: running the branch that frees memory first lowers the peak. The
// original order computes both wide tensors before reducing either.
TEST(Golden, ReorderingRunsOneBranchToTheEnd) {
  auto m = parse_with_shapes(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    branches (float[1,64] x) => (float[1,64] y) {
      a1 = Tile (x, reps)
      b1 = Tile (x, reps)
      a2 = ReduceSum (a1, axes)
      b2 = ReduceSum (b1, axes)
      y = Add (a2, b2)
    }
  )",
                             {{"a1", {16, 64}},
                              {"b1", {16, 64}},
                              {"a2", {1, 64}},
                              {"b2", {1, 64}},
                              {"reps", {2}},
                              {"axes", {1}}});
  // reps and axes are undefined inputs in this text; declare them as graph inputs of int64.
  for (const char* name : {"reps", "axes"}) {
    ir::Value* v = m.graph->find_value(name);
    ASSERT_NE(v, nullptr);
    v->set_dtype(ir::DType::kInt64);
    m.graph->add_input(v);
  }
  PlanOptions opt;
  opt.workspace = false;
  auto original = plan(*m.graph, opt);
  ASSERT_TRUE(original.is_ok()) << original.status().message();
  EXPECT_EQ(original->lower_bound, 2 * 4096u + 256u);  // a1, b1 and a2 live while a2 runs
  auto best = plan_with_reorder(*m.graph, opt);
  ASSERT_TRUE(best.is_ok());
  EXPECT_EQ(
      plan_to_text(*best),
      R"(plan: arena=4608 lower_bound=4608 naive=8704 strategy=greedy-by-size align=256 optimal
order: @a1 @a2 @b1 @b2 @y
value    offset      size     bytes  steps
a1            0      4096      4096  0..1
a2         4096       256       256  1..4
b1            0      4096      4096  2..3
b2         4352       256       256  3..4
)");
}

}  // namespace
}  // namespace xopt::planner
