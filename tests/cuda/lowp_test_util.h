// GPU tests in float16 and bfloat16, and their CPU twins. A case is written once with float32
// tensors in ONNX text; it runs in each low-precision type with every float32 tensor type turned
// into that type. The CPU executor on the converted model (the twin in the same precision) states
// the expected answer; the float32 model on the same rounded inputs is a second reference. Both
// comparisons are relative to the reference's scale with a tolerance stated in units of the type's
// epsilon (float16 2^-10, bfloat16 2^-7): our kernels compute in fp32 and round once, so a
// single-op case differs from either reference by about one rounding.
//
// The CPU half (both CPU runs, and the twin against fp32) always runs; without a device the GPU
// half skips, saying so.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "tests/cuda/cuda_test_util.h"

namespace xopt::test {

struct LowpType {
  ir::DType dtype;
  const char* name;  // "Float16", "BFloat16": the test-name suffix
  double eps;        // the spacing of the type's values at 1
};
inline constexpr LowpType kFloat16Type{ir::DType::kFloat16, "Float16", 0x1p-10};
inline constexpr LowpType kBFloat16Type{ir::DType::kBFloat16, "BFloat16", 0x1p-7};

struct LowpCase {
  // GPU against the CPU twin in the same precision: max|a-b| <= ulps * eps * max|ref|.
  double ulps = 4;
  // GPU (and the CPU twin) against the float32 model on the same rounded inputs.
  double fp32_ulps = 8;
  uint32_t seed = 7;
  // Inputs given explicitly, in float32 (or integer); float ones are rounded to the type.
  std::map<std::string, ir::Tensor> inputs;
};

// `fp32_text` with every float32 tensor type ("float[2,3] x", "float x", initializers) written as
// `t` ("float16[2,3] x"); attributes and the rest unchanged.
std::string lowp_text(std::string_view fp32_text, ir::DType t);

// tests/util/equivalence.h's random_inputs (the same values, seed for seed) that also fills
// float16 and bfloat16 inputs: floats uniform in [-2, 2) rounded to the type.
std::map<std::string, ir::Tensor> random_inputs_any_float(const ir::Graph& g, uint32_t seed = 7);

// lowp_text, except that initializers given with float literals ("float[2] w = {1, 2}") stay
// float32 in the text (the ONNX text parser reads no half-type literals); after parsing,
// convert_float_initializers rounds every float32 initializer of the graph to `t`.
std::string lowp_text_keeping_literals(std::string_view fp32_text, ir::DType t);
void convert_float_initializers(ir::Graph& g, ir::DType t);

// A float tensor of any float type as float32 (other types unchanged).
ir::Tensor as_float32(const ir::Tensor& t);

// `t` (float32) rounded to `dtype` (float16 or bfloat16, to nearest even).
ir::Tensor round_to(const ir::Tensor& t, ir::DType dtype);

// Runs the case in type `t` as described above; records failures naming the model's first node.
void expect_cuda_lowp_matches_cpu(std::string_view fp32_text, const LowpType& t,
                                  const LowpCase& c = {});

// tests/cuda/cuda_test_util.h's expect_cuda_matches_cpu for a text case runs it in float32 and then
// in both low-precision types as above (with LowpCase's default tolerances). These two say what
// else a case wants: float32 alone (with the reason), or the half types with other tolerances.
void expect_cuda_matches_cpu_fp32_only(std::string_view model_text, const CudaCase& c,
                                       const char* why_fp32_only);
void expect_cuda_matches_cpu_all_types(std::string_view model_text, const CudaCase& c,
                                       const LowpCase& lc);

// For TEST_P suites over the two types: INSTANTIATE_TEST_SUITE_P(Lowp, Suite, kLowpTypes,
// lowp_type_name).
inline const auto kLowpTypes = ::testing::Values(kFloat16Type, kBFloat16Type);
inline std::string lowp_type_name(const ::testing::TestParamInfo<LowpType>& info) {
  return info.param.name;
}

}  // namespace xopt::test
