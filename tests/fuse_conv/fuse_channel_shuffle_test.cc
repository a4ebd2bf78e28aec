// fuse-channel-shuffle: Concat, Reshape splitting the axis, Transpose interleaving the parts
// becomes a Concat on the next axis and a Reshape.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// ShuffleNet's channel shuffle of two branches with 2 groups.
TEST(FuseChannelShuffle, ConcatOnNextAxis) {
  EXPECT_REWRITES("fuse-channel-shuffle", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,2] a, float[1,2,3,2] b) => (float[1,4,3,2] y)
      <int64[5] s1 = {1, 2, 2, 3, 2}, int64[4] s2 = {1, 4, 3, 2}> {
      c = Concat <axis = 1> (a, b)
      r = Reshape(c, s1)
      t = Transpose <perm = [0, 2, 1, 3, 4]> (r)
      y = Reshape(t, s2)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,2] a, float[1,2,3,2] b) => (float[1,4,3,2] y)
      <int64[4] s2 = {1, 4, 3, 2}, int64[5] s1_shuffled = {1, 2, 2, 3, 2}> {
      c_interleaved = Concat <axis = 2> (a, b)
      t = Reshape(c_interleaved, s1_shuffled)
      y = Reshape(t, s2)
    })");
}

// Three parts and a symbolic batch, which the new shape copies (0); fuse-transpose then merges
// the two Reshapes, leaving a Concat and a Reshape where there were four nodes.
TEST(FuseChannelShuffle, ThreePartsSymbolicBatchThenReshapesCollapse) {
  EXPECT_REWRITES("fuse-channel-shuffle,fuse-transpose", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,2,5] a, float[N,2,5] b, float[N,2,5] c) => (float[N,6,5] y)
      <int64[4] s1 = {0, 3, 2, 5}, int64[3] s2 = {-1, 6, 5}> {
      j = Concat <axis = -2> (a, b, c)
      r = Reshape(j, s1)
      t = Transpose <perm = [0, 2, 1, 3]> (r)
      y = Reshape(t, s2)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,2,5] a, float[N,2,5] b, float[N,2,5] c) => (float[N,6,5] y)
      <int64[3] s2 = {-1, 6, 5}> {
      j_interleaved = Concat <axis = 2> (a, b, c)
      y = Reshape(j_interleaved, s2)
    })");
}

TEST(FuseChannelShuffle, DoesNotApply) {
  // The Transpose moves other dims; the Reshape does not split the Concat axis into (parts, s);
  // the parts differ in size; the Concat axis is the last (nothing to concatenate along after it);
  // the Concat's result is read elsewhere too.
  EXPECT_NOT_APPLIED("fuse-channel-shuffle", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,2] a, float[1,2,3,2] b, float[1,1,3,2] u, float[1,3,3,2] v, float[2,3] p,
       float[2,3] q)
      => (float[1,2,3,2,2] y1, float[1,1,4,3,2] y2, float[1,2,2,3,2] y3, float[2,3,2] y4,
          float[1,2,2,3,2] y5, float[1,4,3,2] c5)
      <int64[5] s1 = {1, 2, 2, 3, 2}, int64[5] s4 = {1, 4, 1, 3, 2}, int64[3] s3 = {2, 2, 3}> {
      c1 = Concat <axis = 1> (a, b)
      r1 = Reshape(c1, s1)
      y1 = Transpose <perm = [0, 1, 3, 4, 2]> (r1)
      c2 = Concat <axis = 1> (a, b)
      r2 = Reshape(c2, s4)
      y2 = Transpose <perm = [0, 2, 1, 3, 4]> (r2)
      c3 = Concat <axis = 1> (u, v)
      r3 = Reshape(c3, s1)
      y3 = Transpose <perm = [0, 2, 1, 3, 4]> (r3)
      c4 = Concat <axis = 1> (p, q)
      r4 = Reshape(c4, s3)
      y4 = Transpose <perm = [0, 2, 1]> (r4)
      c5 = Concat <axis = 1> (a, b)
      r5 = Reshape(c5, s1)
      y5 = Transpose <perm = [0, 2, 1, 3, 4]> (r5)
    })");
}

TEST(FuseChannelShuffle, NumericallyExact) {
  // Three parts of a 4-D tensor, and two parts concatenated along the first axis.
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,3,5] a, float[2,4,3,5] b, float[2,4,3,5] d, float[4,3] p, float[4,3] q)
      => (float[2,12,3,5] y, float[4,6] z)
      <int64[5] s1 = {2, 3, 4, 3, 5}, int64[4] s2 = {2, 12, 3, 5}, int64[3] s3 = {2, 4, 3},
       int64[2] s4 = {4, 6}> {
      c = Concat <axis = 1> (a, b, d)
      r = Reshape(c, s1)
      t = Transpose <perm = [0, 2, 1, 3, 4]> (r)
      y = Reshape(t, s2)
      c2 = Concat <axis = 0> (p, q)
      r2 = Reshape(c2, s3)
      t2 = Transpose <perm = [1, 0, 2]> (r2)
      z = Reshape(t2, s4)
    })";
  // Both sides copy elements: any difference at all is a mismatch.
  auto stats =
      test::expect_pipeline_preserves_outputs(text, "fuse-channel-shuffle", test::kBitwise);
  EXPECT_EQ(test::counter(stats, "fuse-channel-shuffle", "fuse-channel-shuffle"), 2);
}

}  // namespace
}  // namespace xopt
