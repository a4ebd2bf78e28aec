// The narrow-type conversions of ir/narrow_float.h against tables computed by the pip onnx package
// (narrow_tables.inc, written by gen_narrow_tables.py beside this file): every code decoded, and
// values around every code, ties, overflow and the special values encoded, with and without
// saturation (and float8e8m0's three rounding modes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/dtype.h"
#include "ir/narrow_float.h"

namespace xopt {
namespace {

#include "tests/dtypes/narrow_tables.inc"

using ir::DType;

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(NarrowFloat, DecodesEveryCodeLikeTheReference) {
  for (const DecodeRow& row : kDecodeRows) {
    SCOPED_TRACE(std::string(ir::dtype_name(row.type)));
    for (int c = 0; c < row.codes; ++c) {
      const float want = from_bits(row.bits[c]);
      const float got = ir::narrow_float_to_float(row.type, static_cast<uint8_t>(c));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << "code " << c;
      } else {
        uint32_t gb;
        std::memcpy(&gb, &got, sizeof gb);
        EXPECT_EQ(gb, row.bits[c]) << "code " << c << ": " << got << ", expected " << want;
      }
    }
  }
}

TEST(NarrowFloat, EncodesLikeTheReference) {
  const ir::E8M0Rounding modes[] = {ir::E8M0Rounding::kUp, ir::E8M0Rounding::kDown,
                                    ir::E8M0Rounding::kNearest};
  int rows = 0;
  for (const EncodeRow& row : kEncodeRows) {
    SCOPED_TRACE(std::string(ir::dtype_name(row.type)) +
                 " saturate=" + std::to_string(row.saturate) + " mode=" + std::to_string(row.mode));
    int bad = 0;
    for (int i = 0; i < row.n; ++i) {
      const float x = from_bits(row.in[i]);
      const uint8_t got = ir::float_to_narrow_float(row.type, x, row.saturate, modes[row.mode]);
      if (got != row.out[i] && ++bad <= 5)
        ADD_FAILURE() << "x=" << x << " (0x" << std::hex << row.in[i] << "): got 0x"
                      << static_cast<int>(got) << ", expected 0x" << static_cast<int>(row.out[i]);
    }
    EXPECT_EQ(bad, 0) << "of " << row.n;
    ++rows;
  }
  EXPECT_EQ(rows, 5 * 2 + 3 * 2);
}

// Every float16 value reaches a float8 in one rounding when given as a double (a half is exactly a
// float): spot-check that a double input rounds once, not through float first.
TEST(NarrowFloat, DoubleInputRoundsOnce) {
  // 1 + 2^-4 + 2^-40 is just above the tie between 1 and 1.125 in e4m3fn: up, to 1.125 (0x39);
  // rounded to float first it would become the exact tie and go to even (1.0, 0x38).
  const double v = 1.0 + 0.0625 + std::ldexp(1.0, -40);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FN, v), 0x39);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FN, 1.0625), 0x38);
}

TEST(NarrowFloat, SpecTableSpecialValues) {
  const double inf = INFINITY;
  // saturate: infinities to the largest finite value.
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FN, inf), 0x7e);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FN, -inf), 0xfe);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E5M2, inf), 0x7b);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FNUZ, -inf), 0xff);
  // no saturation: e5m2 has infinities, the others give NaN (fnuz: the single 0x80).
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E5M2, 1e6, false), 0x7c);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E5M2, -inf, false), 0xfc);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FN, 1e6, false), 0x7f);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FNUZ, -1e6, false), 0x80);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E5M2FNUZ, inf, false), 0x80);
  // -0: kept by the formats that have it, 0 in the fnuz ones (0x80 is their NaN).
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FN, -0.0), 0x80);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E4M3FNUZ, -0.0), 0x00);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E5M2FNUZ, -1e-30), 0x00);
  // float4e2m1 always saturates.
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat4E2M1, 100.0, false), 0x7);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat4E2M1, -inf, false), 0xf);
  // float8e8m0: powers of two; up rounds any fraction up, saturation stops at 2^127.
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E8M0, 1.0), 127);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E8M0, 1.5), 128);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E8M0, 1.5, true, ir::E8M0Rounding::kDown), 127);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E8M0, 3e38, true), 254);
  EXPECT_EQ(ir::float_to_narrow_float(DType::kFloat8E8M0, 3e38, false), 255);
  EXPECT_EQ(ir::narrow_float_to_float(DType::kFloat8E8M0, 127), 1.0f);
  EXPECT_TRUE(std::isnan(ir::narrow_float_to_float(DType::kFloat8E8M0, 255)));
}

TEST(NarrowFloat, RoundModeNames) {
  ir::E8M0Rounding r;
  EXPECT_TRUE(ir::parse_e8m0_rounding("nearest", &r));
  EXPECT_EQ(r, ir::E8M0Rounding::kNearest);
  EXPECT_TRUE(ir::parse_e8m0_rounding("down", &r));
  EXPECT_EQ(r, ir::E8M0Rounding::kDown);
  EXPECT_FALSE(ir::parse_e8m0_rounding("even", &r));
}

// Integers into the narrow integer types keep their low bits (the spec's "discard higher bits and
// reinterpret"; the ONNX Cast tests expect the same from floats, e.g. -9 -> int4 7).
TEST(NarrowInt, WrapsAndSignExtends) {
  EXPECT_EQ(static_cast<int8_t>(ir::wrap_narrow_int(DType::kInt4, -9)), 7);
  EXPECT_EQ(static_cast<int8_t>(ir::wrap_narrow_int(DType::kInt4, 8)), -8);
  EXPECT_EQ(static_cast<int8_t>(ir::wrap_narrow_int(DType::kInt4, -1)), -1);
  EXPECT_EQ(ir::wrap_narrow_int(DType::kUInt4, -9), 7);
  EXPECT_EQ(ir::wrap_narrow_int(DType::kUInt4, 200), 8);
  EXPECT_EQ(static_cast<int8_t>(ir::wrap_narrow_int(DType::kInt2, 2)), -2);
  EXPECT_EQ(static_cast<int8_t>(ir::wrap_narrow_int(DType::kInt2, -3)), 1);
  EXPECT_EQ(ir::wrap_narrow_int(DType::kUInt2, -1), 3);
  EXPECT_EQ(ir::narrow_int_value(DType::kInt4, ir::wrap_narrow_int(DType::kInt4, -8)), -8);
  EXPECT_EQ(ir::narrow_int_value(DType::kUInt4, 15), 15);
  for (DType t : {DType::kInt4, DType::kUInt4, DType::kInt2, DType::kUInt2})
    for (int64_t v = ir::narrow_int_min(t); v <= ir::narrow_int_max(t); ++v)
      EXPECT_EQ(ir::narrow_int_value(t, ir::wrap_narrow_int(t, v)), v);
}

TEST(NarrowTypes, CodesNamesAndSizes) {
  struct Row {
    DType t;
    int code, bits;
    const char* name;
    int opset;
  };
  const Row rows[] = {
      {DType::kFloat8E4M3FN, 17, 8, "float8e4m3fn", 19},
      {DType::kFloat8E4M3FNUZ, 18, 8, "float8e4m3fnuz", 19},
      {DType::kFloat8E5M2, 19, 8, "float8e5m2", 19},
      {DType::kFloat8E5M2FNUZ, 20, 8, "float8e5m2fnuz", 19},
      {DType::kUInt4, 21, 4, "uint4", 21},
      {DType::kInt4, 22, 4, "int4", 21},
      {DType::kFloat4E2M1, 23, 4, "float4e2m1", 23},
      {DType::kFloat8E8M0, 24, 8, "float8e8m0", 24},
      {DType::kUInt2, 25, 2, "uint2", 25},
      {DType::kInt2, 26, 2, "int2", 25},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(static_cast<int>(r.t), r.code);
    EXPECT_EQ(ir::dtype_size(r.t), 1u);  // one byte each in memory
    EXPECT_EQ(ir::dtype_bits(r.t), r.bits);
    EXPECT_EQ(ir::dtype_name(r.t), r.name);
    EXPECT_EQ(ir::dtype_from_name(r.name), r.t);
    EXPECT_EQ(ir::narrow_type_opset(r.t), r.opset);
    EXPECT_FALSE(ir::is_float(r.t));
    EXPECT_FALSE(ir::is_integer(r.t));
    EXPECT_TRUE(ir::is_valid_dtype_code(r.code));
  }
  EXPECT_FALSE(ir::is_valid_dtype_code(27));  // float6e2m3: not represented
  EXPECT_EQ(ir::narrow_type_opset(DType::kFloat), 0);
}

}  // namespace
}  // namespace xopt
