#include "precision/float_data.h"

#include <limits>

namespace xopt::precision {

std::vector<float> to_floats(const ir::Tensor& t) {
  const int64_t n = t.numel();
  std::vector<float> out;
  switch (t.dtype()) {
    case ir::DType::kFloat: {
      const float* p = t.data<float>();
      out.assign(p, p + n);
      break;
    }
    case ir::DType::kDouble: {
      const double* p = t.data<double>();
      out.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
      break;
    }
    case ir::DType::kFloat16: {
      const auto* p = t.data<ir::Float16>();
      out.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) out[i] = ir::half_to_float(p[i].bits);
      break;
    }
    case ir::DType::kBFloat16: {
      const auto* p = t.data<ir::BFloat16>();
      out.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) out[i] = ir::bfloat16_to_float(p[i].bits);
      break;
    }
    default:
      break;
  }
  return out;
}

ir::Tensor from_floats(ir::DType dtype, const std::vector<int64_t>& dims,
                       const std::vector<float>& values) {
  ir::Tensor t(dtype, dims);
  const size_t n = values.size();
  if (dtype == ir::DType::kFloat16) {
    auto* p = t.mutable_data<ir::Float16>();
    for (size_t i = 0; i < n; ++i) p[i].bits = ir::float_to_half(values[i]);
  } else if (dtype == ir::DType::kBFloat16) {
    auto* p = t.mutable_data<ir::BFloat16>();
    for (size_t i = 0; i < n; ++i) p[i].bits = ir::float_to_bfloat16(values[i]);
  } else {
    float* p = t.mutable_data<float>();
    for (size_t i = 0; i < n; ++i) p[i] = values[i];
  }
  return t;
}

float round_to(ir::DType dtype, float v) {
  if (dtype == ir::DType::kFloat16) return ir::half_to_float(ir::float_to_half(v));
  if (dtype == ir::DType::kBFloat16) return ir::bfloat16_to_float(ir::float_to_bfloat16(v));
  return v;
}

double dtype_max(ir::DType dtype) {
  if (dtype == ir::DType::kFloat16) return 65504.0;
  if (dtype == ir::DType::kBFloat16) return 3.3895313892515355e38;
  return std::numeric_limits<float>::max();
}

double dtype_min_normal(ir::DType dtype) {
  if (dtype == ir::DType::kFloat16) return 6.103515625e-05;  // 2^-14
  return std::numeric_limits<float>::min();                  // bfloat16 has float's exponent
}

}  // namespace xopt::precision
