// Integer dims as text, in ir::Shape::to_string's format: "[1,3,224,224]", "[]" for a scalar. The
// one helper every error message that shows dims uses (kernels, executors, shape inference). A
// negative entry (a Reshape's -1, a negative pad) prints as its number, where a Shape would print
// "?" for an unknown dim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xopt::ir {

inline std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

}  // namespace xopt::ir
