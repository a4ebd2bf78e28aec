// Numerical equivalence of a model before and after passes: both run on the CPU executor with the
// same random inputs and every output must agree within a relative tolerance.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <string_view>

#include "executor/cpu/session.h"
#include "ir/text.h"
#include "passes/pass_manager.h"

namespace xopt::test {

// Seeded inputs for every runtime input: floats uniform in [-2, 2), integers in [0, 4) (valid
// ids for the small gathers tests build), bools either way; unknown or symbolic dims become 2.
inline std::map<std::string, ir::Tensor> random_inputs(const ir::Graph& g, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::map<std::string, ir::Tensor> out;
  for (const ir::Value* v : g.runtime_inputs()) {
    std::vector<int64_t> dims;
    for (const ir::Dim& d : v->shape().dims()) dims.push_back(d.is_known() ? d.value : 2);
    ir::Tensor t(v->dtype(), dims);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (v->dtype()) {
        case ir::DType::kFloat:
          t.mutable_data<float>()[i] = u(rng);
          break;
        case ir::DType::kDouble:
          t.mutable_data<double>()[i] = u(rng);
          break;
        case ir::DType::kInt64:
          t.mutable_data<int64_t>()[i] = static_cast<int64_t>(rng() % 4);
          break;
        case ir::DType::kInt32:
          t.mutable_data<int32_t>()[i] = static_cast<int32_t>(rng() % 4);
          break;
        case ir::DType::kBool:
          t.mutable_data<bool>()[i] = (rng() & 1) != 0;
          break;
        default:
          ADD_FAILURE() << "random_inputs: no generator for the dtype of " << v->name();
      }
    }
    out.emplace(v->name(), std::move(t));
  }
  return out;
}
inline std::map<std::string, ir::Tensor> random_inputs(const ir::Model& m, uint32_t seed = 7) {
  return random_inputs(*m.graph, seed);
}

// Max |a - b| / (atol + rtol |b|) over two float tensors; > 1 means they differ.
inline double mismatch(const ir::Tensor& a, const ir::Tensor& b, double rtol, double atol) {
  if (a.dims() != b.dims() || a.dtype() != b.dtype()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.as_double(i), y = b.as_double(i);
    if (std::isnan(x) != std::isnan(y)) return INFINITY;
    if (std::isnan(x)) continue;
    worst = std::max(worst, std::abs(x - y) / (atol + rtol * std::abs(y)));
  }
  return worst;
}

// Runs both models on the same inputs and expects equal outputs.
inline void expect_same_outputs(const ir::Model& before, const ir::Model& after,
                                const std::map<std::string, ir::Tensor>& inputs, double rtol = 1e-4,
                                double atol = 1e-5) {
  auto want = exec::run_model(before, inputs);
  ASSERT_TRUE(want.is_ok()) << "before: " << want.status().message();
  auto got = exec::run_model(after, inputs);
  ASSERT_TRUE(got.is_ok()) << "after: " << got.status().message();
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_LE(mismatch((*got)[i], (*want)[i], rtol, atol), 1.0) << "output " << i;
}

// Parses `text`, runs `pipeline` on a copy (verifying after every pass) and compares outputs on
// random inputs. Returns the pipeline statistics so tests can also check that something changed.
inline passes::PipelineStats expect_pipeline_preserves_outputs(std::string_view text,
                                                               std::string_view pipeline,
                                                               double rtol = 1e-4,
                                                               double atol = 1e-5) {
  passes::PipelineStats stats;
  auto before = ir::parse_model_text(text);
  auto after = ir::parse_model_text(text);
  EXPECT_TRUE(before.is_ok() && after.is_ok());
  if (!before.is_ok() || !after.is_ok()) return stats;
  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  Status st = pm.add_pipeline(pipeline);
  EXPECT_TRUE(st.is_ok()) << st.message();
  passes::PassContext ctx;
  st = pm.run(*after, ctx, &stats);
  EXPECT_TRUE(st.is_ok()) << st.message();
  if (!st.is_ok()) return stats;
  expect_same_outputs(*before, *after, random_inputs(*before->graph));
  return stats;
}

}  // namespace xopt::test

namespace xopt::test {

// "float[2,3] w = {...}" with uniform values in [lo, hi) for models written as text.
inline std::string random_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                      uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  int64_t n = 1;
  std::string text = "float[";
  for (size_t i = 0; i < dims.size(); ++i) {
    text += (i ? "," : "") + std::to_string(dims[i]);
    n *= dims[i];
  }
  text += "] " + name + " = {";
  for (int64_t i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(u(rng));
  return text + "}";
}

}  // namespace xopt::test
