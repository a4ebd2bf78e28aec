// Element types. The numeric values are those of onnx::TensorProto::DataType so that conversion is
// a cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace xopt::ir {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  // The narrow types of opsets 19-25 (ONNX 1.14-1.20). In memory every element takes one byte, so
  // numel * dtype_size stays the size of a tensor for every kernel and for the memory planner:
  //  - the float8 formats and float4e2m1 hold their bit pattern in the low bits of a uint8_t
  //    (convert with the functions of ir/narrow_float.h);
  //  - int4/int2 hold a sign-extended int8_t, uint4/uint2 a uint8_t, always inside their range.
  // The sub-byte types (dtype_bits < 8) are packed only where a tensor crosses the ONNX boundary:
  // TensorProto raw_data, int32_data and external data hold them packed, low bits first (ONNX's
  // layout), and ir/tensor_proto.cc packs and unpacks them there. Unpacking costs a copy that a
  // memory-mapped external tensor of a wider type avoids; in exchange no kernel, view or planner
  // size needs to know about packing. is_float / is_integer stay false for all of them: only
  // Cast, CastLike, QuantizeLinear and DequantizeLinear compute with them.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// The largest DType code xopt represents (ONNX's float6 types, 27 and 28, are not).
inline constexpr int32_t kLastDTypeCode = 26;

// Bytes per element in memory; 0 for kUndefined and kString (strings are stored out of line).
size_t dtype_size(DType t);
// Bits per element in ONNX's serialized form: 4 for int4, uint4 and float4e2m1, 2 for int2 and
// uint2, 8 * dtype_size otherwise.
int dtype_bits(DType t);
// int4, uint4, int2, uint2, float4e2m1: packed in TensorProto, one byte each in memory.
inline bool is_subbyte(DType t) {
  return dtype_bits(t) > 0 && dtype_bits(t) < 8;
}
// The float8 formats and float4e2m1 (bit patterns in a byte).
bool is_narrow_float(DType t);
// int4, uint4, int2, uint2.
bool is_narrow_int(DType t);
// Whether a DType code (a TensorProto data_type or a `to` attribute) is one xopt represents.
inline bool is_valid_dtype_code(int64_t code) {
  return code >= 1 && code <= kLastDTypeCode;
}
// ONNX spelling: "float", "int64", "float16", ...
std::string_view dtype_name(DType t);
// Parses ONNX spellings ("float", "int64", ...); kUndefined when unknown.
DType dtype_from_name(std::string_view name);
bool is_float(DType t);    // float16, bfloat16, float, double
bool is_integer(DType t);  // signed and unsigned integers (not bool)
bool is_signed(DType t);

// IEEE half and bfloat16 stored as raw bits.
struct Float16 {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
inline float bfloat16_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint16_t float_to_bfloat16(float f);  // round to nearest even

// The DType of a C++ element type, for typed accessors: dtype_of<float>() == DType::kFloat.
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::kFloat;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kDouble;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType dtype_of<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType dtype_of<uint16_t>() {
  return DType::kUInt16;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType dtype_of<uint32_t>() {
  return DType::kUInt32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType dtype_of<uint64_t>() {
  return DType::kUInt64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}
template <>
constexpr DType dtype_of<Float16>() {
  return DType::kFloat16;
}
template <>
constexpr DType dtype_of<BFloat16>() {
  return DType::kBFloat16;
}

}  // namespace xopt::ir
