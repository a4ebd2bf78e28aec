// Conversions between float and the narrow types of opsets 19-25: the float8 formats, float4e2m1
// and float8e8m0 (bit patterns held in one byte, see ir/dtype.h), plus the wrap-around of integers
// into int4/uint4/int2/uint2. They follow the ONNX reference (onnx.numpy_helper and ml_dtypes, as
// used by onnx/reference/ops/op_cast.py) bit for bit; tests/dtypes checks them against tables
// generated from it.
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/dtype.h"

namespace xopt::ir {

// Rounding of a conversion to float8e8m0 (Cast's `round_mode`, opset 24): `up` rounds any fraction
// away from zero (the default), `down` truncates, `nearest` rounds to nearest with ties up.
enum class E8M0Rounding { kUp, kDown, kNearest };
// Parses "up", "down", "nearest"; false for anything else.
bool parse_e8m0_rounding(std::string_view s, E8M0Rounding* out);

// The value of bit pattern `bits` of narrow float type `t` (exact: every value is a float; NaN
// patterns give NaN, E5M2's infinities give infinities).
float narrow_float_to_float(DType t, uint8_t bits);

// `v` rounded to the nearest value of narrow float type `t`, ties to even, in one rounding step
// (every float, half and bfloat16 is exactly a double, so they round once too).
//  - saturate: values beyond the largest finite value (infinities included) give it, with their
//    sign; otherwise they give infinity (float8e5m2) or NaN (e4m3fn keeps the sign; the fnuz
//    formats have a single NaN, 0x80, and no negative zero). float4e2m1 has neither infinity nor
//    NaN and always saturates; NaN gives 0x8 and -NaN 0x0 there, as ml_dtypes does.
//  - float8e8m0 (2^(bits - 127), 0xFF is NaN) follows onnx.numpy_helper.to_float8e8m0: the input
//    is first rounded to float, its sign is ignored and `rounding` applies to its fraction;
//    saturate keeps rounding from reaching the NaN pattern.
uint8_t float_to_narrow_float(DType t, double v, bool saturate = true,
                              E8M0Rounding rounding = E8M0Rounding::kUp);

// Integer `v` wrapped into int4/uint4/int2/uint2 (its low bits, reinterpreted as two's complement
// for the signed types), as the in-memory byte (sign-extended for the signed types).
uint8_t wrap_narrow_int(DType t, int64_t v);
// The in-memory byte of an int4/int2 (sign-extended) or uint4/uint2 element as an integer.
inline int64_t narrow_int_value(DType t, uint8_t byte) {
  return (t == DType::kInt4 || t == DType::kInt2) ? static_cast<int8_t>(byte) : byte;
}
// Range of a narrow integer type: int4 [-8, 7], uint4 [0, 15], int2 [-2, 1], uint2 [0, 3].
int64_t narrow_int_min(DType t);
int64_t narrow_int_max(DType t);

}  // namespace xopt::ir

namespace xopt::ir {

// The first default-domain opset whose Cast, CastLike, QuantizeLinear and DequantizeLinear accept
// type `t` (they gained the narrow types together): 19 for the four float8 formats, 21 for
// int4/uint4, 23 for float4e2m1, 24 for float8e8m0 (a Q/DQ scale only), 25 for int2/uint2; 0 for
// the other types.
int narrow_type_opset(DType t);

}  // namespace xopt::ir
