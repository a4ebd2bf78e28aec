// Runs one ONNX backend node test folder (model.onnx + test_data_set_*/) through run_model and
// compares with the stored outputs (rtol 1e-3, atol 1e-7, the ONNX backend defaults).
#pragma once

#include <string>

namespace xopt::test {

// Empty string on success, otherwise what failed.
std::string run_node_test_dir(const std::string& dir);

}  // namespace xopt::test
