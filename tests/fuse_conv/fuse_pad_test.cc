// fuse-pad: a constant-mode Pad of the spatial dims folded into the Conv, AveragePool or MaxPool
// reading it, where the pad semantics agree.
#include <cmath>

#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

const std::string kWeights = test::random_initializer("w", {3, 2, 3, 3}, 11);

// A zero Pad before a Conv (joining its own pads), before a MaxPool of Relu output (x >= 0, so
// the zeros never win a max), and before an AveragePool without pads (which then counts them).
TEST(FusePad, FoldsIntoConvAndPools) {
  EXPECT_REWRITES(
      "fuse-pad",
      R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2,5,5] x) => (float[1,3,6,6] y, float[1,2,3,3] z, float[1,2,5,3] u)
      <)" +
          kWeights +
          R"(, int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}, int64[8] ph = {0, 0, 1, 0, 0, 0, 1, 0}> {
      xp = Pad(x, p)
      y = Conv <pads = [0, 0, 1, 1]> (xp, w)
      r = Relu(x)
      rp = Pad(r, p)
      z = MaxPool <kernel_shape = [3, 3], strides = [2, 2]> (rp)
      xh = Pad(x, ph)
      u = AveragePool <kernel_shape = [3, 3]> (xh)
    })",
      R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2,5,5] x) => (float[1,3,6,6] y, float[1,2,3,3] z, float[1,2,5,3] u)
      <)" +
          kWeights + R"(> {
      y = Conv <pads = [1, 1, 2, 2]> (x, w)
      r = Relu(x)
      z = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (r)
      u = AveragePool <kernel_shape = [3, 3], pads = [1, 0, 1, 0], count_include_pad = 1> (x)
    })");
}

// Before opset 11 the pads and value are attributes; a Pad with the lowest float before a MaxPool
// needs no sign knowledge; an AveragePool that already counts its pads takes more.
TEST(FusePad, AttributesAndLowestValue) {
  EXPECT_REWRITES("fuse-pad", R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[1,2,5,5] x) => (float[1,2,3,3] z, float[1,2,5,5] u) {
      xp = Pad <pads = [0, 0, 1, 1, 0, 0, 1, 1], value = -3.4028234e38> (x)
      z = MaxPool <kernel_shape = [3, 3], strides = [2, 2]> (xp)
      xq = Pad <pads = [0, 0, 1, 0, 0, 0, 0, 1]> (x)
      u = AveragePool <kernel_shape = [3, 3], pads = [0, 1, 1, 0], count_include_pad = 1> (xq)
    })",
                  R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[1,2,5,5] x) => (float[1,2,3,3] z, float[1,2,5,5] u) {
      z = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (x)
      u = AveragePool <kernel_shape = [3, 3], pads = [1, 1, 1, 1], count_include_pad = 1> (x)
    })");
}

// One Pad read by a Conv and an AveragePool (cse merges equal Pads): both take it over.
TEST(FusePad, SharedPadFoldsIntoEveryReader) {
  EXPECT_REWRITES("fuse-pad", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,5,5] x) => (float[1,3,5,5] y, float[1,2,5,5] u)
      <)" + kWeights + R"(, int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}> {
      xp = Pad(x, p)
      y = Conv(xp, w)
      u = AveragePool <kernel_shape = [3, 3]> (xp)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,5,5] x) => (float[1,3,5,5] y, float[1,2,5,5] u) <)" +
                      kWeights + R"(> {
      y = Conv <pads = [1, 1, 1, 1]> (x, w)
      u = AveragePool <kernel_shape = [3, 3], pads = [1, 1, 1, 1], count_include_pad = 1> (x)
    })");
}

// Left alone: a zero Pad before a MaxPool of a value that may be negative (zeros would win the max
// where the MaxPool's own padding is ignored), a Pad of 1 before a Conv, a channel Pad, reflect
// mode, an AveragePool with pads it does not count, an AveragePool with ceil_mode, a MaxPool
// whose padding would fill a whole window, a negative (cropping) pad, a Pad read twice.
TEST(FusePad, DoesNotApply) {
  EXPECT_NOT_APPLIED(
      "fuse-pad",
      R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2,5,5] x)
      => (float[1,2,3,3] a, float[1,3,6,6] b, float[1,3,5,5] c, float[1,2,3,3] d,
          float[1,2,7,7] e, float[1,2,3,3] f, float[1,2,4,4] h, float[1,3,2,2] k,
          float[1,3,5,5] m, float[1,2,7,7] n)
      <)" +
          kWeights +
          R"(, int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}, int64[8] pc = {0, 1, 0, 0, 0, 0, 0, 0},
       int64[8] p2 = {0, 0, 2, 2, 0, 0, 2, 2}, int64[8] pn = {0, 0, -1, -1, 0, 0, 0, 0},
       float one = {1}, float[3,3,3,3] w3 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
       0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
       0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
       0}> {
      xa = Pad(x, p)
      a = MaxPool <kernel_shape = [3, 3], strides = [2, 2]> (xa)
      xb = Pad(x, p, one)
      b = Conv <pads = [0, 0, 1, 1]> (xb, w)
      xc = Pad(x, pc)
      c = Conv <pads = [1, 1, 1, 1]> (xc, w3)
      xd = Pad <mode = "reflect"> (x, p)
      d = AveragePool <kernel_shape = [3, 3], strides = [2, 2]> (xd)
      xe = Pad(x, p)
      e = AveragePool <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (xe)
      xf = Pad(x, p)
      f = AveragePool <kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1> (xf)
      r = Relu(x)
      xh = Pad(r, p2)
      h = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (xh)
      xk = Pad(x, pn)
      k = Conv <strides = [1, 1]> (xk, w)
      xm = Pad(x, p)
      m = Conv(xm, w)
      n = Relu(xm)
    })");
}

// Why DoesNotApply leaves a zero Pad before a MaxPool of signed values: MaxPool's own padding is
// ignored, the explicit zeros are not, and a window of negative values at the border gives 0 with
// the Pad but its largest negative value without it.
TEST(FusePad, ZeroPadBeforeMaxPoolOfSignedValuesDiffers) {
  const char* padded = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2,5,5] x) => (float[1,2,3,3] a) <int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}> {
      xa = Pad(x, p)
      a = MaxPool <kernel_shape = [3, 3], strides = [2, 2]> (xa)
    })";
  const char* folded = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2,5,5] x) => (float[1,2,3,3] a) {
      a = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (x)
    })";
  ir::Model before = test::parse_text(padded);
  // All-negative inputs: every border window differs.
  auto inputs = test::random_inputs(before);
  for (auto& [name, t] : inputs)
    for (int64_t i = 0; i < t.numel(); ++i)
      t.mutable_data<float>()[i] = -1.0f - std::abs(t.data<float>()[i]);
  auto want = exec::run_model(before, inputs);
  auto got = exec::run_model(test::parse_text(folded), inputs);
  ASSERT_TRUE(want.is_ok() && got.is_ok());
  EXPECT_NE(test::outputs_difference(*got, *want), "");
  EXPECT_FALSE(test::run_pipeline("fuse-pad", padded).changed);
}

TEST(FusePad, NumericallyEquivalent) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2,7,6] x) => (float[2,3,8,7] y, float[2,2,4,4] z, float[2,2,4,4] v, float[2,2,7,6] u,
                            float[2,2,4,4] t)
      <)" + kWeights + R"(, int64[8] p = {0, 0, 1, 2, 0, 0, 2, 1}, float low = {-3.4028234e38}> {
      xp = Pad(x, p)
      y = Conv <pads = [0, 1, 0, 0]> (xp, w)
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      r = Relu(x)
      rp = Pad(r, p)
      z = MaxPool <kernel_shape = [3, 3], strides = [3, 2]> (rp)
      xl = Pad(x, p, low)
      v = MaxPool <kernel_shape = [3, 3], strides = [3, 2]> (xl)
      x3 = Pad(x, p)
      u = AveragePool <kernel_shape = [4, 4]> (x3)
      x4 = Pad(x, p)
      t = AveragePool <kernel_shape = [3, 3], strides = [3, 2], pads = [1, 0, 0, 1], count_include_pad = 1> (x4)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-pad");
  EXPECT_EQ(test::counter(stats, "fuse-pad", "conv"), 1);
  EXPECT_EQ(test::counter(stats, "fuse-pad", "max-pool"), 2);
  EXPECT_EQ(test::counter(stats, "fuse-pad", "average-pool"), 2);
}

}  // namespace
}  // namespace xopt
