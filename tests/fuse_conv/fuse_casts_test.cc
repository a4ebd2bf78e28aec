// fuse-casts: same-type Casts go, and so does the middle of a Cast chain whose middle type holds
// every value of the source type.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// int32 -> int64 -> int32 (gone), bool -> int32 -> float (one Cast), float -> float (gone),
// float -> double -> float16 (one Cast), int32 -> double -> int64 (one Cast: int64 holds every
// int32).
constexpr const char* kChains = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (int32[4] i, bool[4] b, float[4] f, int32[4] j)
    => (int32[4] r, float[4] s, float[4] t, float16[4] h, int64[4] k) {
    i2 = Add(i, i)
    w = Cast <to = 7> (i2)
    r = Cast <to = 6> (w)
    bi = Cast <to = 6> (b)
    s = Cast <to = 1> (bi)
    f2 = Relu(f)
    t = Cast <to = 1> (f2)
    d = Cast <to = 11> (f)
    h = Cast <to = 10> (d)
    jd = Cast <to = 11> (j)
    k = Cast <to = 7> (jd)
  })";

TEST(FuseCasts, RedundantCastsGo) {
  EXPECT_REWRITES_EXACTLY("fuse-casts", kChains, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int32[4] i, bool[4] b, float[4] f, int32[4] j)
      => (int32[4] r, float[4] s, float[4] t, float16[4] h, int64[4] k) {
      r = Add(i, i)
      s = Cast <to = 1> (b)
      t = Relu(f)
      h = Cast <to = 10> (f)
      k = Cast <to = 7> (j)
    })");
}

// The middle Cast also read elsewhere stays; the outer one reads the source directly.
TEST(FuseCasts, MiddleReadElsewhereStays) {
  EXPECT_REWRITES_EXACTLY("fuse-casts", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool[4] b) => (int64[4] w, float[4] s) {
      w = Cast <to = 7> (b)
      s = Cast <to = 1> (w)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool[4] b) => (int64[4] w, float[4] s) {
      w = Cast <to = 7> (b)
      s = Cast <to = 1> (b)
    })");
}

// Left alone: narrowing middles (int64 -> int32, float -> int32, float -> float16, double ->
// float, int32 -> float), a float middle before an integer type that cannot hold the source
// (int32 -> double -> uint8: 256 wraps to 0 through int32 -> uint8, not through double), a
// same-type Cast from a graph input to a graph output (nothing can take the output's name).
TEST(FuseCasts, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-casts", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[4] l, float[4] f, double[4] d, int32[4] i)
      => (int64[4] a, float[4] b, float[4] c, double[4] e, int32[4] k, uint8[4] u, float[4] o) {
      l2 = Add(l, l)
      l32 = Cast <to = 6> (l2)
      a = Cast <to = 7> (l32)
      f2 = Relu(f)
      fi = Cast <to = 6> (f2)
      b = Cast <to = 1> (fi)
      fh = Cast <to = 10> (f2)
      c = Cast <to = 1> (fh)
      d2 = Relu(d)
      df = Cast <to = 1> (d2)
      e = Cast <to = 11> (df)
      i2 = Add(i, i)
      i_f = Cast <to = 1> (i2)
      k = Cast <to = 6> (i_f)
      id = Cast <to = 11> (i2)
      u = Cast <to = 2> (id)
      o = Cast <to = 1> (f)
    })");
}

TEST(FuseCasts, NumericallyEquivalent) {
  auto stats = test::expect_pipeline_preserves_outputs(kChains, "fuse-casts", test::kBitwise);
  EXPECT_EQ(test::counter(stats, "fuse-casts", "round-trip"), 1);
  EXPECT_EQ(test::counter(stats, "fuse-casts", "chain"), 3);
  EXPECT_EQ(test::counter(stats, "fuse-casts", "same-type"), 1);
}

}  // namespace
}  // namespace xopt
