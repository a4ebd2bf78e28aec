// fuse-slices: Slices that tile one axis of a value become one Split.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// x[:, :2] and x[:, 2:] (PyTorch's export of a channel split); the end is INT64_MAX.
TEST(FuseSlices, TwoSlicesBecomeSplit) {
  EXPECT_REWRITES("fuse-slices", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,6,3] x) => (float[2,2,3] a, float[2,4,3] b)
      <int64[1] s0 = {0}, int64[1] s2 = {2}, int64[1] e = {9223372036854775807},
       int64[1] ax = {1}> {
      a = Slice(x, s0, s2, ax)
      b = Slice(x, s2, e, ax)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,6,3] x) => (float[2,2,3] a, float[2,4,3] b) <int64[2] split = {2, 4}> {
      a, b = Split <axis = 1> (x, split)
    })");
}

// Negative bounds and axes, the Slices out of order and apart; before opset 13 the sizes are an
// attribute. The Split goes where the first Slice was, so every reader still follows it.
TEST(FuseSlices, OutOfOrderNegativeBoundsOpset11) {
  EXPECT_REWRITES("fuse-slices", R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[4,5] x) => (float[4,2] y) <int64[1] m3 = {-3}, int64[1] m1 = {-1}, int64[1] z = {0},
                                        int64[1] big = {100}, int64[1] ax = {-1}> {
      c = Slice(x, m1, big, ax)
      r = Relu(c)
      a = Slice(x, z, m3, ax)
      b = Slice(x, m3, m1, ax)
      y = Add(a, b)
      w = Mul(r, r)
    })",
                  R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[4,5] x) => (float[4,2] y) {
      a, b, c = Split <axis = 1, split = [2, 2, 1]> (x)
      r = Relu(c)
      y = Add(a, b)
      w = Mul(r, r)
    })");
}

TEST(FuseSlices, DoesNotApply) {
  // A gap, an overlap, a step of 2, a bound that is not constant, a lone Slice, an unknown dim,
  // and two Slices on different axes.
  EXPECT_NOT_APPLIED("fuse-slices", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[6,6] x, int64[1] k, float[N,2] u, float[4,4] v)
      => (float[2,6] a, float[3,6] b, float[6,3] c, float[6,4] d, float[3,6] e, float[2,6] f,
          float[3,6] h, float[1,2] i, float[1,2] j, float[2,4] l, float[4,2] m)
      <int64[1] s0 = {0}, int64[1] s2 = {2}, int64[1] s3 = {3}, int64[1] s6 = {6},
       int64[1] st2 = {2}, int64[1] ax0 = {0}, int64[1] ax1 = {1}, int64[1] s1 = {1}> {
      a = Slice(x, s0, s2, ax0)
      b = Slice(x, s3, s6, ax0)
      c = Slice(x, s0, s3, ax1)
      d = Slice(x, s2, s6, ax1)
      e = Slice(x, s0, s6, ax0, st2)
      f = Slice(x, s3, s6, ax0, st2)
      h = Slice(x, k, s6, ax0)
      i = Slice(u, s0, s1, ax0)
      j = Slice(u, s1, s2, ax0)
      l = Slice(v, s0, s2, ax0)
      m = Slice(v, s2, s6, ax1)
    })");
}

// A bound from a Constant node between the Slices goes with them.
TEST(FuseSlices, NumericallyExact) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,7,3] x) => (float[2,3,3] a, float[2,3,3] b, float[2,1,3] c, float[2,7,1] d,
                           float[2,7,2] e)
      <int64[1] s0 = {0}, int64[1] s3 = {3}, int64[1] m1 = {-1}, int64[1] big = {99},
       int64[1] ax1 = {1}, int64[1] ax2 = {2}, int64[1] one = {1}> {
      b = Slice(x, s3, m1, ax1, one)
      zero = Constant <value = int64[1] {0}> ()
      a = Slice(x, zero, s3, ax1)
      c = Slice(x, m1, big, ax1)
      d = Slice(x, s0, one, ax2)
      e = Slice(x, one, big, ax2)
    })";
  // Both sides copy elements: any difference at all is a mismatch.
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-slices", test::kBitwise);
  EXPECT_EQ(test::counter(stats, "fuse-slices", "fuse-slices"), 2);
  EXPECT_EQ(test::counter(stats, "fuse-slices", "slices"), 5);
}

}  // namespace
}  // namespace xopt
