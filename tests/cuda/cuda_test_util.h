// GPU tests and their CPU twins. Every GPU case states its expected answer through the CPU
// reference executor: the model runs on the CPU (the expectation) and inside its memory plan on the
// GPU, and every output must agree relative to the reference's scale. Without a device the GPU half
// skips, saying so; the CPU half (the model parses, infers shapes, plans and runs on the CPU)
// always runs, so a case that cannot even state its expectation fails in CI too.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::test {

struct CudaCase {
  // tests/util/compare_outputs.h's rule: max|gpu - cpu| <= atol + rtol * max|cpu|, cosine, NaN
  // and Inf are mismatches, and a degenerate reference fails the case.
  double rtol = 1e-4;
  double atol = 1e-6;
  uint32_t seed = 7;
  bool tf32 = false;
  bool use_graph = true;
  // Inputs given explicitly (others are random: floats in [-2, 2), integers in [0, 4)).
  std::map<std::string, ir::Tensor> inputs;
};

// Parses `model_text` (ONNX text syntax), infers shapes, plans memory, runs it on the CPU executor
// (expectation) and, when a GPU is present, on the CUDA executor inside the plan; compares every
// output. Records failures with the model's first node in the message.
void expect_cuda_matches_cpu(std::string_view model_text, const CudaCase& c = {});
// Same for a loaded model (e.g. a shared model after fold,fuse,plan; the plan stored in it is used
// when present).
void expect_cuda_matches_cpu(ir::Model& model, const CudaCase& c = {});

// True when a CUDA device can be used; otherwise `why`.
bool gpu_present(std::string* why = nullptr);

}  // namespace xopt::test

#define XOPT_REQUIRE_GPU()                                                                         \
  do {                                                                                             \
    std::string xopt_why_;                                                                         \
    if (!::xopt::test::gpu_present(&xopt_why_)) GTEST_SKIP() << "GPU test skipped: " << xopt_why_; \
  } while (0)
