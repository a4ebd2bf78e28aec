// Golden-test helpers: parse a model in ONNX text syntax, run one pass (or pipeline) through the
// PassManager with verification after every pass, and compare printed graphs.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <map>
#include <random>

#include "executor/cpu/session.h"
#include "ir/text.h"
#include "passes/pass_manager.h"

namespace xopt::test {

inline ir::Model parse_or_die(std::string_view text) {
  auto m = ir::parse_model_text(text);
  if (!m.is_ok()) {
    ADD_FAILURE() << m.status().message();
    return {};
  }
  return std::move(m).value();
}

// The graph of `text` as print_graph_text prints it, so expected graphs can be written loosely.
inline std::string canonical_text(std::string_view text) {
  return ir::print_graph_text(parse_or_die(text));
}

// Deterministic inputs for every runtime input of `model` (symbolic or unknown dims become 2).
inline std::map<std::string, ir::Tensor> sample_inputs(const ir::Model& model, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::map<std::string, ir::Tensor> inputs;
  for (const ir::Value* v : model.graph->runtime_inputs()) {
    std::vector<int64_t> dims;
    for (const ir::Dim& d : v->shape().dims()) dims.push_back(d.is_known() ? d.value : 2);
    ir::Tensor t(v->dtype(), dims);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (v->dtype()) {
        case ir::DType::kFloat:
          t.mutable_data<float>()[i] = std::uniform_real_distribution<float>(-2, 2)(rng);
          break;
        case ir::DType::kInt64:
          t.mutable_data<int64_t>()[i] = static_cast<int64_t>(rng() % 5);
          break;
        case ir::DType::kBool:
          t.mutable_data<bool>()[i] = (rng() & 1) != 0;
          break;
        default:
          break;
      }
    }
    inputs[v->name()] = std::move(t);
  }
  return inputs;
}

// Empty when `after` computes exactly (bit for bit) what `before` computes on sample inputs, or
// when the CPU executor cannot run `before` at all (an op without a kernel); else the difference.
inline std::string numeric_difference(const ir::Model& before, const ir::Model& after,
                                      bool* checked = nullptr) {
  auto inputs = sample_inputs(before);
  auto expected = exec::run_model(before, inputs);
  if (checked != nullptr) *checked = expected.is_ok();
  if (!expected.is_ok()) return "";
  auto got = exec::run_model(after, inputs);
  if (!got.is_ok()) return "the rewritten model does not run: " + got.status().message();
  if (got->size() != expected->size()) return "different number of outputs";
  for (size_t i = 0; i < got->size(); ++i)
    if (!(*got)[i].same_contents((*expected)[i]))
      return "output " + before.graph->outputs()[i]->name() + " differs";
  return "";
}

struct PassOutcome {
  Status status;
  bool changed = false;
  std::string text;  // graph after the run
  passes::PipelineStats stats;
  std::string numeric_difference;    // see numeric_difference()
  bool numerically_checked = false;  // the CPU executor could run the model
};

// Runs `pipeline` (pass or group names) on the model in `text`, verifying after every pass.
inline PassOutcome run_pipeline(std::string_view pipeline, std::string_view text,
                                passes::PassContext* context = nullptr) {
  PassOutcome out;
  ir::Model model = parse_or_die(text);
  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  out.status = pm.add_pipeline(pipeline);
  if (!out.status.is_ok()) return out;
  passes::PassContext local;
  out.status = pm.run(model, context != nullptr ? *context : local, &out.stats);
  out.changed = out.stats.changed;
  out.text = ir::print_graph_text(model);
  if (out.status.is_ok())
    out.numeric_difference =
        numeric_difference(parse_or_die(text), model, &out.numerically_checked);
  return out;
}

}  // namespace xopt::test

// Runs `pass` on `before` and expects the printed result to equal `after` (also ONNX text).
#define EXPECT_PASS_REWRITES(pass, before, after)                                \
  do {                                                                           \
    auto xopt_outcome_ = ::xopt::test::run_pipeline(pass, before);               \
    ASSERT_TRUE(xopt_outcome_.status.is_ok()) << xopt_outcome_.status.message(); \
    EXPECT_TRUE(xopt_outcome_.changed);                                          \
    EXPECT_EQ(xopt_outcome_.text, ::xopt::test::canonical_text(after));          \
    EXPECT_EQ(xopt_outcome_.numeric_difference, "");                             \
  } while (0)

// Runs `pass` on `model` and expects it to report no change and leave the graph as it was.
#define EXPECT_PASS_DOES_NOT_APPLY(pass, model)                                  \
  do {                                                                           \
    auto xopt_outcome_ = ::xopt::test::run_pipeline(pass, model);                \
    ASSERT_TRUE(xopt_outcome_.status.is_ok()) << xopt_outcome_.status.message(); \
    EXPECT_FALSE(xopt_outcome_.changed);                                         \
    EXPECT_EQ(xopt_outcome_.text, ::xopt::test::canonical_text(model));          \
  } while (0)
