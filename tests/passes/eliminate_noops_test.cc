// eliminate-noops: one golden per no-op family, graph-output naming, and near misses it must keep.
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(EliminateNoops, IdentityChain) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      b = Identity(a)
      c = Identity(b)
      y = Neg(c)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      y = Neg(a)
    })");
}

TEST(EliminateNoops, InferenceDropout) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[2,3] y) <float r = {0.5}, bool off = {0}> {
      a = Relu(x)
      b = Dropout(a)
      c, unused_mask = Dropout(b, r, off)
      y = Neg(c)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[2,3] y) <float r = {0.5}, bool off = {0}> {
      a = Relu(x)
      y = Neg(a)
    })");
}

TEST(EliminateNoops, Dropout7HasNoTrainingMode) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 4, opset_import: ["" : 10]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      b = Dropout <ratio = 0.3> (a)
      y = Neg(b)
    })",
                          R"(
    <ir_version: 4, opset_import: ["" : 10]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      y = Neg(a)
    })");
}

TEST(EliminateNoops, CastToSameType) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, int64[2] i) => (float[2,3] y, int64[2] j) {
      a = Relu(x)
      b = Cast <to = 1> (a)
      y = Neg(b)
      k = Cast <to = 7> (i)
      j = Abs(k)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, int64[2] i) => (float[2,3] y, int64[2] j) {
      a = Relu(x)
      y = Neg(a)
      j = Abs(i)
    })");
}

TEST(EliminateNoops, ReshapeToSameShape) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,4] x) => (float[N,3,4] y) <int64[3] s1 = {2, 3, 4}, int64[3] s2 = {0, 3, -1}> {
      a = Relu(x)
      b = Reshape(a, s2)
      y = Neg(b)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,4] x) => (float[N,3,4] y) <int64[3] s1 = {2, 3, 4}, int64[3] s2 = {0, 3, -1}> {
      a = Relu(x)
      y = Neg(a)
    })");
}

TEST(EliminateNoops, IdentityTransposeExpandSlicePadConcat) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[2,3,4] y)
       <int64[2] ones = {1, 4}, int64[1] zero = {0}, int64[1] big = {9223372036854775807},
        int64[1] ax = {-1}, int64[6] nopad = {0, 0, 0, 0, 0, 0}> {
      a = Relu(x)
      b = Transpose <perm = [0, 1, 2]> (a)
      c = Expand(b, ones)
      d = Slice(c, zero, big, ax)
      e = Pad(d, nopad)
      f = Concat <axis = 1> (e)
      y = Neg(f)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] x) => (float[2,3,4] y)
       <int64[2] ones = {1, 4}, int64[1] zero = {0}, int64[1] big = {9223372036854775807},
        int64[1] ax = {-1}, int64[6] nopad = {0, 0, 0, 0, 0, 0}> {
      a = Relu(x)
      y = Neg(a)
    })");
}

TEST(EliminateNoops, OldOpsetAttributes) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 4, opset_import: ["" : 9]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      b = Slice <starts = [0, -5], ends = [2, 100], axes = [0, 1]> (a)
      c = Pad <pads = [0, 0, 0, 0]> (b)
      y = Neg(c)
    })",
                          R"(
    <ir_version: 4, opset_import: ["" : 9]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      y = Neg(a)
    })");
}

// The graph output keeps its name: the producer of the no-op's input now writes `y` directly.
TEST(EliminateNoops, GraphOutputKeepsItsName) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      a = Relu(x)
      b = Neg(a)
      y = Identity(a)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      y = Relu(x)
      b = Neg(y)
    })");
}

// y = Cast(x) with x a graph input: neither name may change, so the Cast becomes an Identity.
TEST(EliminateNoops, NoopBetweenInputAndOutputBecomesIdentity) {
  EXPECT_REWRITES_EXACTLY("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      y = Cast <to = 1> (x)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      y = Identity(x)
    })");
}

TEST(EliminateNoops, IdentityBetweenNamesThatMustStayIsKept) {
  EXPECT_NOT_APPLIED("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y, float[2,3] z, float[2,3] w) {
      y = Relu(x)
      z = Identity(y)
      w = Identity(x)
    })");
}

TEST(EliminateNoops, NearMissesStay) {
  EXPECT_NOT_APPLIED("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, bool train) => (float[2,3] y1, float[3,2] y2, float[2,2] y3, float[2,5] y4,
                                     float[2,3] y5, bool[2,3] m, float[2,3] y6, double[2,3] y7,
                                     float[2,3,1] y8, float[2,2,3] y9)
       <bool on = {1}, int64[1] one = {1}, int64[1] big = {100}, int64[4] pads = {0, 1, 0, 1},
        int64[2] neg = {0, -1}, int64[3] s3 = {2, 3, 1}, int64[3] e3 = {2, 2, 3}> {
      y1 = Dropout(x, , on)
      y2 = Transpose <perm = [1, 0]> (x)
      y3 = Slice(x, one, big, one)
      y4 = Pad(x, pads)
      y5, m = Dropout(x)
      y6 = Dropout(x, , train)
      y7 = Cast <to = 11> (x)
      y8 = Reshape(x, s3)
      y9 = Expand(x, e3)
    })");
}

TEST(EliminateNoops, ReversingSliceWithSameShapeStays) {
  EXPECT_NOT_APPLIED("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) <int64[1] st = {-1}, int64[1] en = {-100},
                                         int64[1] ax = {1}, int64[1] step = {-1}> {
      y = Slice(x, st, en, ax, step)
    })");
}

TEST(EliminateNoops, CountsPerOp) {
  auto r = test::run_pipeline("eliminate-noops", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) {
      a = Identity(x)
      b = Identity(a)
      c = Dropout(b)
      y = Sigmoid(c)
    })");
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  const auto* s = r.stats.find("eliminate-noops");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->counters.at("Identity"), 2);
  EXPECT_EQ(s->counters.at("Dropout"), 1);
  EXPECT_EQ(s->nodes_removed, 3);
}

}  // namespace
}  // namespace xopt
