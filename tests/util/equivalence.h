// Numerical equivalence of a model before and after passes: both run on the CPU executor with the
// same random inputs and every output must agree within a tolerance relative to its scale.
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
#include "tests/util/compare_outputs.h"

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
        case ir::DType::kInt8:
          t.mutable_data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
          break;
        case ir::DType::kUInt8:
          t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(rng() % 256);
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

// Runs both models on the same inputs and expects every output of `after` to match `before`'s
// (tests/util/compare_outputs.h: relative to the reference's scale, cosine, no NaN, and a reference
// that is not degenerate).
inline void expect_same_outputs(const ir::Model& before, const ir::Model& after,
                                const std::map<std::string, ir::Tensor>& inputs,
                                const OutputTolerance& tol = {}) {
  auto want = exec::run_model(before, inputs);
  ASSERT_TRUE(want.is_ok()) << "before: " << want.status().message();
  auto got = exec::run_model(after, inputs);
  ASSERT_TRUE(got.is_ok()) << "after: " << got.status().message();
  std::vector<std::string> names;
  for (const ir::Value* v : before.graph->outputs()) names.push_back(v->name());
  EXPECT_EQ(outputs_difference(*got, *want, tol, names), "");
}

// Parses `text`, runs `pipeline` on a copy (verifying after every pass) and compares outputs on
// random inputs. Returns the pipeline statistics so tests can also check that something changed.
inline passes::PipelineStats expect_pipeline_preserves_outputs(std::string_view text,
                                                               std::string_view pipeline,
                                                               const OutputTolerance& tol = {}) {
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
  expect_same_outputs(*before, *after, random_inputs(*before->graph), tol);
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
