// Which element types each CPU kernel takes and what it accumulates in: the facts `xopt
// --list-ops` prints and the precision pass can rely on ("store low, compute high").
//
// Every kernel with float16 or bfloat16 in and out computes in float32 (or double) and rounds once
// at its output, as the ONNX reference does for a model stored in those types; the kernels that
// sum many terms (reductions, normalizations, Softmax, GEMM, convolution, attention, pooling, ...)
// accumulate in float32 or double, never in the half type, so a converted model needs no Casts
// around them.
//
// types: for ONNX ops, the element types the op's schema allows at the newest opset the kernel
// implements, at any input or output (onnx_schema_types below: Attention lists bool and the
// integers for its mask and lengths), less those the kernel refuses (a table in
// kernel_precision.cc); for the com.microsoft ops a table gives what their kernels dispatch on.
// accumulates: the accumulator of the reducing kernels for half inputs ("f32" or "f64"), "" for the
// ops that sum nothing (elementwise, data movement), which still compute each element in float32
// and round once.
//
// tests/lowp_slow checks the float16 and bfloat16 claims against what the kernels run on every
// ONNX node test (their twins in those types), tests/lowp the accumulators.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace xopt::exec {

struct KernelPrecision {
  std::vector<ir::DType> types;  // tensor element types taken, in a fixed order (f64 f32 f16 ...)
  std::string accumulates;       // "f32", "f64" or "" (sums nothing)
};

// `domain` is "" (or "ai.onnx") for ONNX ops; `opset` the newest opset the kernel implements.
KernelPrecision kernel_precision(const std::string& domain, const std::string& op_type, int opset);

// What the ONNX schema of (domain, op) at `opset` allows (executor/cpu/onnx_schema_types.inc,
// generated from the onnx package by executor/cpu/gen/gen_schema_types.py), or nullptr for an op
// it does not define. Per input and per output parameter, the low float types it allows: bit 1
// float16, 2 bfloat16, 4 float32 (the last parameter's mask repeats for variadic ones).
struct SchemaTypes {
  std::vector<ir::DType> types;  // every element type of any input or output
  std::vector<int> inputs, outputs;
  int since_version = 0;
  static constexpr int kF16 = 1, kBF16 = 2, kF32 = 4;
  int input_mask(size_t i) const {
    return inputs.empty() ? 0 : inputs[std::min(i, inputs.size() - 1)];
  }
  int output_mask(size_t i) const {
    return outputs.empty() ? 0 : outputs[std::min(i, outputs.size() - 1)];
  }
};
const SchemaTypes* onnx_schema_types(const std::string& domain, const std::string& op_type,
                                     int opset);

// "f32", "f16", "bf16", "f64", "i8", "u8", ..., "bool", "str", "f8e4m3fn", ...
std::string short_dtype_name(ir::DType t);

// "f64 f32 f16 bf16 i32 i64" (types joined by spaces) and, when it accumulates, "; accumulates
// f32": one listing line's precision part.
std::string describe(const KernelPrecision& p);

}  // namespace xopt::exec
