// Float tensors as float vectors and back, for the precision measurements (calibration, local
// error): float, double, float16 and bfloat16 read as float; writes round to nearest even.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "ir/tensor.h"

namespace xopt::precision {

// The elements of a float16, bfloat16, float or double tensor as floats (empty for other types).
std::vector<float> to_floats(const ir::Tensor& t);
// A tensor of `dtype` (float16, bfloat16 or float) holding `values` rounded to it.
ir::Tensor from_floats(ir::DType dtype, const std::vector<int64_t>& dims,
                       const std::vector<float>& values);
// `v` rounded to float16 or bfloat16 and back (overflow gives inf, as a Cast does).
float round_to(ir::DType dtype, float v);

// The largest finite value and the smallest normal value of float16, bfloat16 and float.
double dtype_max(ir::DType dtype);
double dtype_min_normal(ir::DType dtype);

}  // namespace xopt::precision
