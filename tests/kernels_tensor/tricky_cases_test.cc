// Hand-computed cases for the corners of the tensor kernels: negative-step Slice, reflect/edge Pad
// with crops, TopK ties, uneven Split, string tensors, empty reductions, coerced Softmax.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/text.h"
#include "tests/util/run_one_node.h"

namespace xopt::exec {
namespace {

using ir::Tensor;

using test::run_one;
using test::values;

std::vector<int64_t> i64(std::initializer_list<int64_t> v) {
  return v;
}

TEST(SliceTest, NegativeStepsAndClamping) {
  const char* text = R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[10] x, int64[1] s, int64[1] e, int64[1] a, int64[1] st) => (float[N] y) {
      y = Slice(x, s, e, a, st)
    })";
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto X = Tensor::of<float>({10}, x);
  auto out = run_one(text, {X, Tensor::of<int64_t>({1}, {8}), Tensor::of<int64_t>({1}, {1}),
                            Tensor::of<int64_t>({1}, {0}), Tensor::of<int64_t>({1}, {-3})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{8, 5, 2}));
  // start past the end clamps to the last element; an end below -dim clamps to "before 0".
  out = run_one(text, {X, Tensor::of<int64_t>({1}, {100}),
                       Tensor::of<int64_t>({1}, {std::numeric_limits<int64_t>::min()}),
                       Tensor::of<int64_t>({1}, {-1}), Tensor::of<int64_t>({1}, {-4})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{9, 5, 1}));
  // Negative start and end with a positive step.
  out = run_one(text, {X, Tensor::of<int64_t>({1}, {-3}), Tensor::of<int64_t>({1}, {-1}),
                       Tensor::of<int64_t>({1}, {0}), Tensor::of<int64_t>({1}, {1})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{7, 8}));
  // Empty result when start is after end for a positive step.
  out = run_one(text, {X, Tensor::of<int64_t>({1}, {5}), Tensor::of<int64_t>({1}, {2}),
                       Tensor::of<int64_t>({1}, {0}), Tensor::of<int64_t>({1}, {1})});
  EXPECT_EQ(out[0].dims(), i64({0}));
}

TEST(SliceTest, TwoDimsOmittedAxesAndOpset1Attributes) {
  auto X = Tensor::of<int32_t>({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int32[3,4] x, int64[2] s, int64[2] e) => (int32[N,M] y) { y = Slice(x, s, e) })",
                     {X, Tensor::of<int64_t>({2}, {2, -1}), Tensor::of<int64_t>({2}, {0, 0})});
  EXPECT_EQ(out[0].dims(), i64({0, 0}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int32[3,4] x, int64[2] s, int64[2] e, int64[2] a, int64[2] st) => (int32[N,M] y) {
      y = Slice(x, s, e, a, st)
    })",
                {X, Tensor::of<int64_t>({2}, {-1, 0}), Tensor::of<int64_t>({2}, {-100, 3}),
                 Tensor::of<int64_t>({2}, {1, 0}), Tensor::of<int64_t>({2}, {-2, 2})});
  // rows 0, 2; columns 3, 1.
  EXPECT_EQ(out[0].dims(), i64({2, 2}));
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{3, 1, 11, 9}));
  out = run_one(R"(<ir_version: 3, opset_import: ["" : 9]>
    g (int32[3,4] x) => (int32[N,M] y) { y = Slice<starts = [1], ends = [1000], axes = [1]>(x) })",
                {X});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{1, 2, 3, 5, 6, 7, 9, 10, 11}));
}

TEST(PadTest, ReflectEdgeWrapAndCrop) {
  auto X = Tensor::of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto pad = [&](const char* mode, std::vector<int64_t> pads) {
    std::string text = std::string(R"(<ir_version: 8, opset_import: ["" : 19]>
      g (float[2,3] x, int64[4] p) => (float[N,M] y) { y = Pad<mode = ")") +
                       mode + R"(">(x, p) })";
    return run_one(text, {X, Tensor::of<int64_t>({4}, pads)})[0];
  };
  Tensor y = pad("reflect", {0, 2, 0, 1});
  EXPECT_EQ(y.dims(), i64({2, 6}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}));
  // Wider than the dim: reflection repeats (numpy.pad semantics).
  y = pad("reflect", {0, 5, 0, 0});
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 1, 2, 3, 2, 1, 2, 3, 5, 4, 5, 6, 5, 4, 5, 6}));
  y = pad("wrap", {1, 1, 0, 0});
  EXPECT_EQ(y.dims(), i64({3, 4}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{6, 4, 5, 6, 3, 1, 2, 3, 6, 4, 5, 6}));
  // Negative pads crop before padding: drop column 0, then repeat the new last column twice.
  y = pad("edge", {0, -1, 0, 2});
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 3, 3, 3, 5, 6, 6, 6}));
  y = pad("constant", {-1, 1, 0, -1});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 4, 5}));
}

TEST(PadTest, ConstantValueAndAxesInput) {
  auto out = run_one(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (int32[2,2] x, int64[2] p, int32 v, int64[1] a) => (int32[N,M] y) { y = Pad(x, p, v, a) })",
                     {Tensor::of<int32_t>({2, 2}, {1, 2, 3, 4}), Tensor::of<int64_t>({2}, {1, 0}),
                      Tensor::scalar<int32_t>(9), Tensor::of<int64_t>({1}, {-2})});
  EXPECT_EQ(out[0].dims(), i64({3, 2}));
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{9, 9, 1, 2, 3, 4}));
  // Opset 2: pads and value are attributes.
  out = run_one(R"(<ir_version: 3, opset_import: ["" : 2]>
    g (float[2] x) => (float[N] y) { y = Pad<pads = [1, 2], value = 7.5>(x) })",
                {Tensor::of<float>({2}, {1, 2})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{7.5, 1, 2, 7.5, 7.5}));
}

TEST(TopKTest, TiesKeepTheLowerIndexFirst) {
  const char* largest = R"(<ir_version: 8, opset_import: ["" : 11]>
    g (float[5] x, int64[1] k) => (float[N] v, int64[N] i) { v, i = TopK(x, k) })";
  auto out =
      run_one(largest, {Tensor::of<float>({5}, {3, 1, 3, 2, 3}), Tensor::of<int64_t>({1}, {2})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{3, 3}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{0, 2}));
  const char* smallest = R"(<ir_version: 8, opset_import: ["" : 11]>
    g (int32[2,4] x, int64[1] k) => (int32[N,M] v, int64[N,M] i) {
      v, i = TopK<largest = 0, axis = 0>(x, k)
    })";
  out = run_one(smallest, {Tensor::of<int32_t>({2, 4}, {2, 1, 1, 5, 2, 0, 1, 4}),
                           Tensor::of<int64_t>({1}, {1})});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{2, 0, 1, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{0, 1, 0, 1}));
  // Opset 1: k is an attribute.
  out = run_one(R"(<ir_version: 3, opset_import: ["" : 1]>
    g (float[4] x) => (float[N] v, int64[N] i) { v, i = TopK<k = 3>(x) })",
                {Tensor::of<float>({4}, {1, 4, 4, 2})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{4, 4, 2}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 2, 3}));
}

TEST(SplitTest, UnevenNumOutputsAndAttributeSplit) {
  auto X = Tensor::of<int64_t>({7}, {0, 1, 2, 3, 4, 5, 6});
  auto out = run_one(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (int64[7] x) => (int64[N] a, int64[M] b, int64[K] c) { a, b, c = Split<num_outputs = 3>(x) })",
                     {X});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{6}));
  out = run_one(R"(<ir_version: 7, opset_import: ["" : 11]>
    g (int64[7] x) => (int64[N] a, int64[M] b) { a, b = Split<split = [5, 2], axis = -1>(x) })",
                {X});
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{5, 6}));
  Status s;
  run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int64[7] x) => (int64[N] a, int64[M] b) { a, b = Split(x) })",
          {X}, &s);
  EXPECT_FALSE(s.is_ok()) << "7 elements do not split evenly in two before opset 18";
}

TEST(StringsTest, TransposeConcatGatherSlice) {
  auto S = Tensor::of_strings({2, 3}, {"a", "b", "c", "d", "e", "f"});
  auto out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (string[2,3] x) => (string[3,2] y) { y = Transpose(x) })",
                     {S});
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"a", "d", "b", "e", "c", "f"}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (string[2,3] x, string[2,3] z) => (string[2,6] y) { y = Concat<axis = -1>(x, z) })",
                {S, S});
  EXPECT_EQ(out[0].strings()[3], "a");
  EXPECT_EQ(out[0].strings()[6], "d");
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (string[2,3] x, int64[2] i) => (string[2,2] y) { y = Gather<axis = 1>(x, i) })",
                {S, Tensor::of<int64_t>({2}, {-1, 0})});
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"c", "a", "f", "d"}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (string[2,3] x, int64[1] s, int64[1] e, int64[1] a, int64[1] st) => (string[2,2] y) {
      y = Slice(x, s, e, a, st)
    })",
                {S, Tensor::of<int64_t>({1}, {-1}), Tensor::of<int64_t>({1}, {-10}),
                 Tensor::of<int64_t>({1}, {1}), Tensor::of<int64_t>({1}, {-2})});
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"c", "a", "f", "d"}));
}

TEST(ReshapeTest, ZeroCopiesUnlessAllowzero) {
  auto X = Tensor(ir::DType::kFloat, {0, 3});
  auto out = run_one(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[0,3] x, int64[2] s) => (float[N,M] y) { y = Reshape<allowzero = 1>(x, s) })",
                     {X, Tensor::of<int64_t>({2}, {3, 0})});
  EXPECT_EQ(out[0].dims(), i64({3, 0}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3,4] x, int64[2] s) => (float[N,M] y) { y = Reshape(x, s) })",
                {Tensor(ir::DType::kFloat, {2, 3, 4}), Tensor::of<int64_t>({2}, {0, -1})});
  EXPECT_EQ(out[0].dims(), i64({2, 12}));
}

TEST(ReduceTest, EmptySetsNoopAndKeepdims) {
  const float inf = std::numeric_limits<float>::infinity();
  auto E = Tensor(ir::DType::kFloat, {2, 0, 4});
  auto out = run_one(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (float[2,0,4] x, int64[1] a) => (float[N,M,K] y) { y = ReduceMax(x, a) })",
                     {E, Tensor::of<int64_t>({1}, {1})});
  EXPECT_EQ(out[0].dims(), i64({2, 1, 4}));
  for (float v : values<float>(out[0])) EXPECT_EQ(v, -inf);
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (float[2,0,4] x, int64[1] a) => (float[N,M] y) { y = ReduceProd<keepdims = 0>(x, a) })",
                {E, Tensor::of<int64_t>({1}, {-2})});
  EXPECT_EQ(out[0].dims(), i64({2, 4}));
  for (float v : values<float>(out[0])) EXPECT_EQ(v, 1.0f);
  auto X = Tensor::of<float>({2, 2}, {1, -2, 3, -4});
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] x) => (float[N,M] y) { y = ReduceSum<noop_with_empty_axes = 1>(x) })",
                {X});
  EXPECT_EQ(values<float>(out[0]), values<float>(X));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] x) => (float[N,M] y) { y = ReduceSum(x) })",
                {X});
  EXPECT_EQ(out[0].dims(), i64({1, 1}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{-2}));
  // Opset 11 ReduceL1 with the axes attribute, over the middle of three dims.
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 11]>
    g (int32[2,2,2] x) => (int32[N,M] y) { y = ReduceL1<axes = [1], keepdims = 0>(x) })",
                {Tensor::of<int32_t>({2, 2, 2}, {1, -2, 3, -4, 5, 6, -7, 8})});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{4, 6, 12, 14}));
}

TEST(ArgMaxTest, SelectLastIndex) {
  auto X = Tensor::of<float>({2, 3}, {1, 5, 5, 7, 7, 2});
  auto out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (int64[N] y) { y = ArgMax<axis = 1, keepdims = 0, select_last_index = 1>(x) })",
                     {X});
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{2, 1}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (int64[N,M] y) { y = ArgMin<axis = -1>(x) })",
                {X});
  EXPECT_EQ(out[0].dims(), i64({2, 1}));
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{0, 2}));
}

TEST(SoftmaxTest, CoercedTo2DBeforeOpset13) {
  auto X = Tensor::of<float>({2, 2}, {0, 0, 0, 0});
  auto out = run_one(R"(<ir_version: 7, opset_import: ["" : 11]>
    g (float[2,2] x) => (float[2,2] y) { y = Softmax<axis = 0>(x) })",
                     {X});
  for (float v : values<float>(out[0])) EXPECT_FLOAT_EQ(v, 0.25f);
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] x) => (float[2,2] y) { y = Softmax<axis = 0>(x) })",
                {X});
  for (float v : values<float>(out[0])) EXPECT_FLOAT_EQ(v, 0.5f);
  // Large inputs stay finite.
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,2] y) { y = LogSoftmax(x) })",
                {Tensor::of<float>({1, 2}, {10000, 10000})});
  for (float v : values<float>(out[0])) EXPECT_NEAR(v, -std::log(2.0f), 1e-6);
}

TEST(MiscTest, RangeCumSumTileExpand) {
  auto out = run_one(
      R"(<ir_version: 8, opset_import: ["" : 11]>
    g (int32 s, int32 l, int32 d) => (int32[N] y) { y = Range(s, l, d) })",
      {Tensor::scalar<int32_t>(10), Tensor::scalar<int32_t>(4), Tensor::scalar<int32_t>(-2)});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{10, 8, 6}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[4] x, int32 a) => (float[4] y) { y = CumSum<exclusive = 1, reverse = 1>(x, a) })",
                {Tensor::of<float>({4}, {1, 2, 3, 4}), Tensor::scalar<int32_t>(0)});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{9, 7, 4, 0}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int32[2,1] x, int64[2] r) => (int32[N,M] y) { y = Tile(x, r) })",
                {Tensor::of<int32_t>({2, 1}, {1, 2}), Tensor::of<int64_t>({2}, {2, 3})});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  out = run_one(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int32[2,1] x, int64[3] s) => (int32[N,M,K] y) { y = Expand(x, s) })",
                {Tensor::of<int32_t>({2, 1}, {1, 2}), Tensor::of<int64_t>({3}, {2, 1, 2})});
  EXPECT_EQ(out[0].dims(), i64({2, 2, 2}));
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{1, 1, 2, 2, 1, 1, 2, 2}));
}

}  // namespace
}  // namespace xopt::exec
