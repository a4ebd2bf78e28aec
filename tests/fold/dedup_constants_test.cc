// dedup-constants: identical initializers are merged.
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(DedupConstants, IdenticalInitializersMerge) {
  EXPECT_REWRITES("dedup-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] a = {1, 2}, float[2] b = {1, 2}, float[2] c = {1, 3},
                                    float[2] d = {1, 2}> {
      p = Mul(x, a)
      q = Mul(p, b)
      r = Add(q, c)
      y = Sub(r, d)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] a = {1, 2}, float[2] c = {1, 3}> {
      p = Mul(x, a)
      q = Mul(p, a)
      r = Add(q, c)
      y = Sub(r, a)
    })");
}

// Same bytes are not enough: dtype and dims must agree too.
TEST(DedupConstants, DifferentDtypeOrDimsStay) {
  EXPECT_NOT_APPLIED("dedup-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2] x, int32[2] i) => (float[1,2] y, int32[2] j) <float[2] a = {1, 2},
                                    float[1,2] b = {1, 2}, int32[2] c = {1065353216, 1073741824}> {
      p = Mul(x, a)
      y = Mul(p, b)
      j = Add(i, c)
    })");
}

// An initializer that is a graph output, or an overridable graph input, keeps its identity.
TEST(DedupConstants, VisibleInitializersStay) {
  EXPECT_NOT_APPLIED("dedup-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] b) <float[2] a = {1, 2}, float[2] b = {1, 2}> {
      y = Mul(x, a)
    })");
  EXPECT_NOT_APPLIED("dedup-constants", R"(
    <ir_version: 3, opset_import: ["" : 11]>
    g (float[2] x, float[2] b) => (float[2] y) <float[2] a = {1, 2}, float[2] b = {1, 2}> {
      p = Mul(x, a)
      y = Mul(p, b)
    })");
}

TEST(DedupConstants, CountsMergedBytes) {
  auto r = test::run_passes("dedup-constants", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float[3] y) <float[3] a = {1, 2, 3}, float[3] b = {1, 2, 3},
                                    float[3] c = {1, 2, 3}> {
      p = Mul(x, a)
      q = Mul(p, b)
      y = Mul(q, c)
    })");
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  const auto& counters = r.stats.find("dedup-constants")->counters;
  EXPECT_EQ(counters.at("initializers"), 2);
  EXPECT_EQ(counters.at("bytes"), 24);
}

}  // namespace
}  // namespace xopt
