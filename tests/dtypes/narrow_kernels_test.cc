// Cast, CastLike, QuantizeLinear and DequantizeLinear with the narrow types: saturate, round_mode,
// per-axis and blocked scales, output_dtype, precision, and the opsets that introduce each type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ir/narrow_float.h"
#include "tests/util/run_one_node.h"

namespace xopt::exec {
namespace {

using ir::DType;
using ir::Tensor;
using test::run_one;
using test::values;

// A narrow tensor from its in-memory bytes (sign-extended for int4/int2).
Tensor narrow(DType t, std::vector<int64_t> dims, std::vector<uint8_t> bytes) {
  Tensor out(t, std::move(dims));
  EXPECT_EQ(static_cast<size_t>(out.numel()), bytes.size());
  if (!bytes.empty()) std::memcpy(out.mutable_raw_data(), bytes.data(), bytes.size());
  return out;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.numel());
}

std::string cast_model(int opset, const std::string& attrs) {
  return "<ir_version: 10, opset_import: [\"\" : " + std::to_string(opset) +
         "]> g (float[4] x) => (uint8[4] y) { y = Cast<" + attrs + ">(x) }";
}

TEST(NarrowCast, SaturateAttribute) {
  const Tensor x = Tensor::of<float>({4}, {1000.f, -1000.f, INFINITY, 0.3f});
  // e4m3fn: 448 is the largest finite value; without saturation NaN (sign kept).
  auto sat = run_one(cast_model(19, "to = 17"), {x});
  EXPECT_EQ(bytes_of(sat[0]), (std::vector<uint8_t>{0x7e, 0xfe, 0x7e, 0x2a}));
  auto nosat = run_one(cast_model(19, "to = 17, saturate = 0"), {x});
  EXPECT_EQ(bytes_of(nosat[0]), (std::vector<uint8_t>{0x7f, 0xff, 0x7f, 0x2a}));
  // e5m2 (largest finite 57344, 1000 fits) overflows to infinity.
  const Tensor big = Tensor::of<float>({4}, {1e6f, -1e6f, 1000.f, 0.3f});
  auto e5 = run_one(cast_model(19, "to = 19, saturate = 0"), {big});
  EXPECT_EQ(bytes_of(e5[0]), (std::vector<uint8_t>{0x7c, 0xfc, 0x64, 0x35}));
  auto e5sat = run_one(cast_model(19, "to = 19"), {big});
  EXPECT_EQ(bytes_of(e5sat[0]), (std::vector<uint8_t>{0x7b, 0xfb, 0x64, 0x35}));
}

TEST(NarrowCast, RoundModeForE8M0) {
  const Tensor x = Tensor::of<float>({4}, {1.0f, 1.5f, 3.0f, 0.75f});
  auto up = run_one(cast_model(24, "to = 24"), {x});  // default: up
  EXPECT_EQ(bytes_of(up[0]), (std::vector<uint8_t>{127, 128, 129, 127}));
  auto down = run_one(cast_model(24, "to = 24, round_mode = \"down\""), {x});
  EXPECT_EQ(bytes_of(down[0]), (std::vector<uint8_t>{127, 127, 128, 126}));
  auto nearest = run_one(cast_model(24, "to = 24, round_mode = \"nearest\""), {x});
  EXPECT_EQ(bytes_of(nearest[0]), (std::vector<uint8_t>{127, 128, 129, 127}));
  Status s;
  run_one(cast_model(24, "to = 24, round_mode = \"even\""), {x}, &s);
  EXPECT_FALSE(s.is_ok());
}

TEST(NarrowCast, IntegersWrapAndWiden) {
  const Tensor x = Tensor::of<float>({4}, {-9.f, 8.f, 7.9f, -1.5f});
  auto i4 = run_one(cast_model(21, "to = 22"), {x});
  EXPECT_EQ(i4[0].dtype(), DType::kInt4);
  EXPECT_EQ(values<int8_t>(i4[0]), (std::vector<int8_t>{7, -8, 7, -1}));
  auto u2 = run_one(cast_model(25, "to = 25"), {x});
  EXPECT_EQ(bytes_of(u2[0]), (std::vector<uint8_t>{3, 0, 3, 3}));
  // int4 -> int8 / float / float8, and uint2 -> string.
  const char* from = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (uint8[3] x) => (uint8[3] y) { y = Cast<to = 3>(x) })";
  const Tensor x4 = narrow(DType::kInt4, {3}, {0xf8, 0x07, 0xff});  // -8, 7, -1
  EXPECT_EQ(values<int8_t>(run_one(from, {x4})[0]), (std::vector<int8_t>{-8, 7, -1}));
  const char* to_float = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (uint8[3] x) => (float[3] y) { y = Cast<to = 1>(x) })";
  EXPECT_EQ(values<float>(run_one(to_float, {x4})[0]), (std::vector<float>{-8, 7, -1}));
  const char* to_e4m3 = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (uint8[3] x) => (uint8[3] y) { y = Cast<to = 17>(x) })";
  EXPECT_EQ(bytes_of(run_one(to_e4m3, {x4})[0]), (std::vector<uint8_t>{0xd0, 0x4e, 0xb8}));
  const char* to_string = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (uint8[2] x) => (string[2] y) { y = Cast<to = 8>(x) })";
  auto s = run_one(to_string, {narrow(DType::kFloat8E4M3FN, {2}, {0x38, 0xb0})});
  EXPECT_EQ(s[0].strings(), (std::vector<std::string>{"1", "-0.5"}));
}

TEST(NarrowCast, SameTypeKeepsTheBytesAndNaNSigns) {
  const char* text = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (uint8[3] x) => (uint8[3] y) { y = Cast<to = 17>(x) })";
  const Tensor x = narrow(DType::kFloat8E4M3FN, {3}, {0xff, 0x7f, 0x01});
  EXPECT_EQ(bytes_of(run_one(text, {x})[0]), (std::vector<uint8_t>{0xff, 0x7f, 0x01}));
  // Through float and back, e4m3fn's signed NaNs keep their sign.
  const char* to_float = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (uint8[3] x) => (float[3] y) { y = Cast<to = 1>(x) })";
  const Tensor f = run_one(to_float, {x})[0];
  EXPECT_TRUE(std::isnan(values<float>(f)[0]) && std::signbit(values<float>(f)[0]));
  std::vector<float> fv = values<float>(f);
  fv.push_back(0.f);
  const Tensor back = run_one(cast_model(25, "to = 17"), {Tensor::of<float>({4}, fv)})[0];
  EXPECT_EQ(bytes_of(back), (std::vector<uint8_t>{0xff, 0x7f, 0x01, 0x00}));
}

TEST(NarrowCast, CastLikeTakesTheTypeAndSaturate) {
  const char* text = R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x, uint8[1] like) => (uint8[2] y) { y = CastLike<saturate = 0>(x, like) })";
  auto y = run_one(text,
                   {Tensor::of<float>({2}, {1e6f, 2.f}), narrow(DType::kFloat8E4M3FNUZ, {1}, {0})});
  EXPECT_EQ(y[0].dtype(), DType::kFloat8E4M3FNUZ);
  EXPECT_EQ(bytes_of(y[0]), (std::vector<uint8_t>{0x80, 0x48}));
}

TEST(NarrowCast, TypesBeforeTheirOpsetAreRefused) {
  const Tensor x = Tensor::of<float>({4}, {1, 2, 3, 4});
  for (auto [opset, to] : {std::pair{18, 17}, {20, 22}, {22, 23}, {23, 24}, {24, 26}}) {
    Status s;
    run_one(cast_model(opset, "to = " + std::to_string(to)), {x}, &s);
    EXPECT_FALSE(s.is_ok()) << "opset " << opset << " to " << to;
    EXPECT_NE(s.message().find("needs opset"), std::string::npos) << s.message();
  }
}

TEST(NarrowQuantize, Int4PerAxisAndBlocked) {
  const char* per_axis = R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] x, float[2] s, uint8[2] z) => (uint8[2,3] y) {
      y = QuantizeLinear<axis = 0>(x, s, z) })";
  auto q = run_one(
      per_axis, {Tensor::of<float>({2, 3}, {1, 2, 30, -4, 5, -60}), Tensor::of<float>({2}, {1, 2}),
                 narrow(DType::kInt4, {2}, {0x01, 0xff})});  // zero points 1, -1
  EXPECT_EQ(q[0].dtype(), DType::kInt4);
  // 1+1, 2+1, 30+1 -> 7; -2-1, 2.5 -> 2 (even) -1, -30-1 -> -8.
  EXPECT_EQ(values<int8_t>(q[0]), (std::vector<int8_t>{2, 3, 7, -3, 1, -8}));

  const char* blocked = R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,4] x, float[2,2] s) => (uint8[2,4] y) {
      y = QuantizeLinear<axis = 1, block_size = 2, output_dtype = 21>(x, s) })";
  auto b = run_one(blocked, {Tensor::of<float>({2, 4}, {1, 2, 3, 4, 5, 6, -7, 80}),
                             Tensor::of<float>({2, 2}, {1, 0.5f, 2, 4})});
  EXPECT_EQ(b[0].dtype(), DType::kUInt4);
  EXPECT_EQ(bytes_of(b[0]), (std::vector<uint8_t>{1, 2, 6, 8, 2, 3, 0, 15}));

  const char* dq = R"(<ir_version: 10, opset_import: ["" : 21]>
    g (uint8[2,4] x, float[2,2] s) => (float[2,4] y) {
      y = DequantizeLinear<axis = 1, block_size = 2>(x, s) })";
  auto d = run_one(dq, {b[0], Tensor::of<float>({2, 2}, {1, 0.5f, 2, 4})});
  EXPECT_EQ(values<float>(d[0]), (std::vector<float>{1, 2, 3, 4, 4, 6, 0, 60}));
}

TEST(NarrowQuantize, Float8SaturateAndInt2) {
  const char* text = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (float[3] x, float s) => (uint8[3] y) {
      y = QuantizeLinear<output_dtype = 17, saturate = 0>(x, s) })";
  auto q = run_one(text, {Tensor::of<float>({3}, {1, 1e4f, -2}), Tensor::scalar<float>(2)});
  EXPECT_EQ(bytes_of(q[0]), (std::vector<uint8_t>{0x30, 0x7f, 0xb8}));
  const char* i2 = R"(<ir_version: 10, opset_import: ["" : 25]>
    g (float[4] x, float s) => (uint8[4] y) {
      y = QuantizeLinear<output_dtype = 26>(x, s) })";
  auto q2 = run_one(i2, {Tensor::of<float>({4}, {-10, -2, 1, 9}), Tensor::scalar<float>(2)});
  EXPECT_EQ(values<int8_t>(q2[0]), (std::vector<int8_t>{-2, -1, 0, 1}));
  Status s;
  run_one(R"(<ir_version: 10, opset_import: ["" : 24]>
    g (float[4] x, float s) => (uint8[4] y) { y = QuantizeLinear<output_dtype = 26>(x, s) })",
          {Tensor::of<float>({4}, {1, 2, 3, 4}), Tensor::scalar<float>(2)}, &s);
  EXPECT_FALSE(s.is_ok());
}

// precision (opset 23): x / scale computed in float16 rounds 2051 to 2052 (float16 steps by 2
// above 2048), in float it stays 2051.
TEST(NarrowQuantize, PrecisionAttribute) {
  const char* base = R"(<ir_version: 10, opset_import: ["" : 23]>
    g (float[1] x, float s) => (uint8[1] y) { y = QuantizeLinear<output_dtype = 4%s>(x, s) })";
  auto model = [&](const std::string& extra) {
    std::string t = base;
    return t.replace(t.find("%s"), 2, extra);
  };
  const Tensor x = Tensor::of<float>({1}, {1000.5f});
  const Tensor s = Tensor::scalar<float>(1.0f);
  EXPECT_EQ(values<uint16_t>(run_one(model(""), {x, s})[0])[0], 1000);  // tie to even in float
  // float16 has 1000.5 exactly (11 bits cover 1000 and one half): the same tie.
  EXPECT_EQ(values<uint16_t>(run_one(model(", precision = 10"), {x, s})[0])[0], 1000);
  const Tensor big = Tensor::of<float>({1}, {2051.f});
  // 2051 is not a float16 (step 2 above 2048): float16 holds 2052.
  EXPECT_EQ(values<uint16_t>(run_one(model(""), {big, s})[0])[0], 2051);
  EXPECT_EQ(values<uint16_t>(run_one(model(", precision = 10"), {big, s})[0])[0], 2052);
}

TEST(NarrowDequantize, Float8AndE8M0Scale) {
  const char* text = R"(<ir_version: 10, opset_import: ["" : 24]>
    g (uint8[3] x, uint8 s) => (float[3] y) { y = DequantizeLinear<output_dtype = 1>(x, s) })";
  // e4m3fn 1, 448, -0.5 times e8m0 2^3.
  auto y = run_one(text, {narrow(DType::kFloat8E4M3FN, {3}, {0x38, 0x7e, 0xb0}),
                          narrow(DType::kFloat8E8M0, {}, {130})});
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{8, 3584, -4}));
  Status s;  // an e8m0 scale needs output_dtype: it is not itself an output type
  run_one(R"(<ir_version: 10, opset_import: ["" : 24]>
    g (uint8[3] x, uint8 s) => (float[3] y) { y = DequantizeLinear(x, s) })",
          {narrow(DType::kFloat8E4M3FN, {3}, {0x38, 0x7e, 0xb0}),
           narrow(DType::kFloat8E8M0, {}, {130})},
          &s);
  EXPECT_FALSE(s.is_ok());
}

}  // namespace
}  // namespace xopt::exec
