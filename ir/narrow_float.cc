#include "ir/narrow_float.h"

#include <cmath>
#include <cstring>

namespace xopt::ir {
namespace {

// A float8/float4 format: exponent and mantissa widths, bias, and how it spends its top codes.
struct Format {
  int exp_bits, man_bits, bias;
  enum Kind { kIeee, kFn, kFnuz, kNoSpecial } kind;
  uint8_t max_code;  // largest finite magnitude
};

Format format_of(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN:
      return {4, 3, 7, Format::kFn, 0x7e};
    case DType::kFloat8E4M3FNUZ:
      return {4, 3, 8, Format::kFnuz, 0x7f};
    case DType::kFloat8E5M2:
      return {5, 2, 15, Format::kIeee, 0x7b};
    case DType::kFloat8E5M2FNUZ:
      return {5, 2, 16, Format::kFnuz, 0x7f};
    default:
      return {2, 1, 1, Format::kNoSpecial, 0x7};  // float4e2m1
  }
}

uint8_t sign_bit(const Format& f) {
  return static_cast<uint8_t>(1u << (f.exp_bits + f.man_bits));
}

uint8_t nan_code(const Format& f, bool negative) {
  switch (f.kind) {
    case Format::kFn:
      return static_cast<uint8_t>(negative ? 0xff : 0x7f);
    case Format::kFnuz:
      return 0x80;
    case Format::kIeee:
      return static_cast<uint8_t>(negative ? 0xfe : 0x7e);
    case Format::kNoSpecial:
      break;
  }
  // float4e2m1 has no NaN: ml_dtypes (the reference's cast) gives 0x8 (-0) for NaN and 0x0 for
  // -NaN; kept for bit-exactness.
  return static_cast<uint8_t>(negative ? 0x0 : 0x8);
}

float e8m0_to_float(uint8_t bits) {
  if (bits == 0xff) return std::nanf("");
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

uint8_t float_to_e8m0(float f, bool saturate, E8M0Rounding rounding) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  uint32_t exponent = (b >> 23) & 0xff;
  if (exponent == 0xff) return 0xff;  // NaN and infinities
  bool round_up = false;
  if (rounding == E8M0Rounding::kUp) {
    round_up = (b & 0x7fffff) != 0;
  } else if (rounding == E8M0Rounding::kNearest) {
    // The reference's test, kept as is: guard bit, and round bit, sticky bits or a nonzero
    // exponent.
    const bool g = (b & 0x400000) != 0, r = (b & 0x200000) != 0, s = (b & 0x1fffff) != 0;
    round_up = g && (r || s || exponent > 0);
  }
  if (round_up && saturate && exponent == 0xfe) round_up = false;
  return static_cast<uint8_t>(exponent + (round_up ? 1 : 0));
}

}  // namespace

bool parse_e8m0_rounding(std::string_view s, E8M0Rounding* out) {
  if (s == "up") {
    *out = E8M0Rounding::kUp;
  } else if (s == "down") {
    *out = E8M0Rounding::kDown;
  } else if (s == "nearest") {
    *out = E8M0Rounding::kNearest;
  } else {
    return false;
  }
  return true;
}

float narrow_float_to_float(DType t, uint8_t bits) {
  if (t == DType::kFloat8E8M0) return e8m0_to_float(bits);
  const Format f = format_of(t);
  const uint8_t sign = sign_bit(f);
  const bool negative = (bits & sign) != 0;
  const int mag = bits & (sign - 1);
  const int e = mag >> f.man_bits, m = mag & ((1 << f.man_bits) - 1);
  const int top = (1 << f.exp_bits) - 1;
  switch (f.kind) {
    case Format::kFn:
      if (mag == 0x7f) return negative ? -std::nanf("") : std::nanf("");  // sign kept, as ml_dtypes
      break;
    case Format::kFnuz:
      if (bits == 0x80) return std::nanf("");
      break;
    case Format::kIeee:
      if (e == top) {
        if (m != 0) return negative ? -std::nanf("") : std::nanf("");
        return negative ? -INFINITY : INFINITY;
      }
      break;
    case Format::kNoSpecial:
      break;
  }
  const float v =
      e == 0 ? std::ldexp(static_cast<float>(m), 1 - f.bias - f.man_bits)
             : std::ldexp(static_cast<float>((1 << f.man_bits) | m), e - f.bias - f.man_bits);
  return negative ? -v : v;
}

uint8_t float_to_narrow_float(DType t, double v, bool saturate, E8M0Rounding rounding) {
  if (t == DType::kFloat8E8M0) return float_to_e8m0(static_cast<float>(v), saturate, rounding);
  const Format f = format_of(t);
  const uint8_t sign = sign_bit(f);
  const bool negative = std::signbit(v);
  if (std::isnan(v)) return nan_code(f, negative);
  if (f.kind == Format::kNoSpecial) saturate = true;  // nothing else to give
  const uint8_t s = negative ? sign : 0;
  const double a = std::fabs(v);
  // The magnitude's code as if the exponent field had no top: subnormals count in units of the
  // smallest subnormal; normals round the mantissa to man_bits. Both scalings are exact in
  // double, so nearbyint performs the format's only rounding (to nearest, ties to even).
  const int emin = 1 - f.bias;
  uint32_t code;
  if (std::isinf(a)) {
    code = 0xffff;
  } else if (a < std::ldexp(1.0, emin)) {
    code = static_cast<uint32_t>(std::nearbyint(std::ldexp(a, f.man_bits - emin)));
  } else {
    int k;
    (void)std::frexp(a, &k);  // a = x * 2^k with x in [0.5, 1)
    const int e = k - 1;
    const double m = std::nearbyint(std::ldexp(a, f.man_bits - e)) - std::ldexp(1.0, f.man_bits);
    // m may round up to 2^man_bits, which carries into the exponent field by itself.
    const double c = std::ldexp(static_cast<double>(e + f.bias), f.man_bits) + m;
    code = c > 0xffff ? 0xffff : static_cast<uint32_t>(c);
  }
  if (code > f.max_code) {
    if (saturate) return static_cast<uint8_t>(s | f.max_code);
    if (f.kind == Format::kIeee) return static_cast<uint8_t>(s | 0x7c);  // infinity
    return nan_code(f, negative);
  }
  if (code == 0 && f.kind == Format::kFnuz) return 0;  // no negative zero (0x80 is NaN)
  return static_cast<uint8_t>(s | code);
}

uint8_t wrap_narrow_int(DType t, int64_t v) {
  const int bits = dtype_bits(t);
  const auto low = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if ((t == DType::kInt4 || t == DType::kInt2) && (low >> (bits - 1)) != 0)
    return static_cast<uint8_t>(low | (~uint64_t{0} << bits));  // sign-extend
  return static_cast<uint8_t>(low);
}

int64_t narrow_int_min(DType t) {
  return t == DType::kInt4 ? -8 : t == DType::kInt2 ? -2 : 0;
}

int64_t narrow_int_max(DType t) {
  switch (t) {
    case DType::kInt4:
      return 7;
    case DType::kUInt4:
      return 15;
    case DType::kInt2:
      return 1;
    default:
      return 3;
  }
}

}  // namespace xopt::ir

namespace xopt::ir {

int narrow_type_opset(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
      return 19;
    case DType::kUInt4:
    case DType::kInt4:
      return 21;
    case DType::kFloat4E2M1:
      return 23;
    case DType::kFloat8E8M0:
      return 24;
    case DType::kUInt2:
    case DType::kInt2:
      return 25;
    default:
      return 0;
  }
}

}  // namespace xopt::ir
