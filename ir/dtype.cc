#include "ir/dtype.h"

#include <cmath>

namespace xopt::ir {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      return 1;
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat:
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kDouble:
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
    case DType::kString:
    case DType::kUndefined:
      return 0;
  }
  return 0;
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kUInt2:
    case DType::kInt2:
      return 2;
    default:
      return static_cast<int>(8 * dtype_size(t));
  }
}

bool is_narrow_float(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
      return true;
    default:
      return false;
  }
}

bool is_narrow_int(DType t) {
  return t == DType::kInt4 || t == DType::kUInt4 || t == DType::kInt2 || t == DType::kUInt2;
}

namespace {
struct NameEntry {
  DType type;
  std::string_view name;
};
constexpr NameEntry kNames[] = {
    {DType::kUndefined, "undefined"},
    {DType::kFloat, "float"},
    {DType::kUInt8, "uint8"},
    {DType::kInt8, "int8"},
    {DType::kUInt16, "uint16"},
    {DType::kInt16, "int16"},
    {DType::kInt32, "int32"},
    {DType::kInt64, "int64"},
    {DType::kString, "string"},
    {DType::kBool, "bool"},
    {DType::kFloat16, "float16"},
    {DType::kDouble, "double"},
    {DType::kUInt32, "uint32"},
    {DType::kUInt64, "uint64"},
    {DType::kComplex64, "complex64"},
    {DType::kComplex128, "complex128"},
    {DType::kBFloat16, "bfloat16"},
    {DType::kFloat8E4M3FN, "float8e4m3fn"},
    {DType::kFloat8E4M3FNUZ, "float8e4m3fnuz"},
    {DType::kFloat8E5M2, "float8e5m2"},
    {DType::kFloat8E5M2FNUZ, "float8e5m2fnuz"},
    {DType::kUInt4, "uint4"},
    {DType::kInt4, "int4"},
    {DType::kFloat4E2M1, "float4e2m1"},
    {DType::kFloat8E8M0, "float8e8m0"},
    {DType::kUInt2, "uint2"},
    {DType::kInt2, "int2"},
};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& e : kNames)
    if (e.type == t) return e.name;
  return "unknown";
}

DType dtype_from_name(std::string_view name) {
  for (const auto& e : kNames)
    if (e.name == name) return e.type;
  return DType::kUndefined;
}

bool is_float(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

bool is_signed(DType t) {
  return is_float(t) || t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 ||
         t == DType::kInt64 || t == DType::kInt4 || t == DType::kInt2 ||
         (is_narrow_float(t) && t != DType::kFloat8E8M0);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      float f = std::ldexp(static_cast<float>(mant), -24);
      std::memcpy(&bits, &f, sizeof bits);
      bits |= sign;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (abs < 0x38800000u) {  // subnormal or zero in half: round to nearest even on 2^-24 units
    float a;
    std::memcpy(&a, &abs, sizeof a);
    float scaled = a * 16777216.0f;  // 2^24
    auto m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  // normal: round mantissa from 23 to 10 bits, nearest even
  uint32_t mant = abs & 0x7fffffu;
  uint32_t exp = (abs >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // nan
  const uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace xopt::ir
