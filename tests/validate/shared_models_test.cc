// The six shared models on the CPU reference executor: outputs within max|ours - torch| /
// max|torch|
// <= 1e-4 of PyTorch's output_0.pb, and bitwise the same when every value lives in a
// one-value-after-another arena (sequential_plan) as when each has its own buffer.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "executor/cpu/compare.h"
#include "executor/cpu/model_inputs.h"
#include "executor/cpu/session.h"
#include "executor/cpu/validate.h"
#include "ir/onnx_io.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/test_util.h"

namespace xopt::exec {
namespace {

namespace fs = std::filesystem;

struct Loaded {
  ir::Model model;
  DataSet data;
};

// Loads NAME and its test_data_set_0 (input_0.pb fed to the first runtime input).
std::optional<Loaded> load(const std::string& name) {
  const std::string path = test::shared_model_path(name);
  auto model = ir::load_model(path);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  if (!model.is_ok()) return std::nullopt;
  auto ds =
      read_data_set(*model->graph, (fs::path(path).parent_path() / "test_data_set_0").string());
  EXPECT_TRUE(ds.is_ok()) << ds.status().message();
  if (!ds.is_ok()) return std::nullopt;
  EXPECT_EQ(ds->inputs.size(), 1u);
  EXPECT_EQ(ds->outputs.size(), 1u);
  return Loaded{std::move(*model), std::move(*ds)};
}

TEST(SharedModels, MatchPyTorchWithin1e4Relative) {
  XOPT_REQUIRE_SHARED(shared);
  for (const std::string& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    auto l = load(name);
    if (!l) continue;
    const auto t0 = std::chrono::steady_clock::now();
    auto got = run_model(l->model, l->data.inputs);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), 1u);
    // The rule asked for: max |ours - torch| / max |torch| <= 1e-4 (no absolute slack).
    const TensorDiff d = compare_tensors(name, (*got)[0], l->data.outputs[0], {1e-4, 0.0});
    std::printf("[ shared ] %-20s max abs %s  max |torch| %s  max rel %s  cosine %.9f  (%.0f ms)\n",
                name.c_str(), format_number(d.max_abs).c_str(), format_number(d.max_ref).c_str(),
                format_number(d.max_rel).c_str(), d.cosine, ms);
    // No absolute slack, and a cosine floor of 0.999999 (compare_outputs.h).
    test::OutputTolerance tol;
    tol.atol = 0;
    tol.min_cosine = 0.999999;
    EXPECT_EQ(test::output_difference((*got)[0], l->data.outputs[0], tol, name), "");
    EXPECT_EQ(test::uncaught_mutations((*got)[0], l->data.outputs[0], tol), "");
  }
}

TEST(SharedModels, SequentialArenaGivesBitwiseIdenticalOutputs) {
  XOPT_REQUIRE_SHARED(shared);
  for (const std::string& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    auto l = load(name);
    if (!l) continue;
    auto simple = run_model(l->model, l->data.inputs);
    ASSERT_TRUE(simple.is_ok()) << simple.status().message();
    for (bool io_in_arena : {false, true}) {
      auto plan = sequential_plan(l->model, l->data.inputs, io_in_arena);
      ASSERT_TRUE(plan.is_ok()) << plan.status().message();
      ASSERT_GT(plan->values.size(), 0u);
      RunOptions ro;
      RunStats stats;
      ro.plan = &*plan;
      ro.stats = &stats;
      auto arena = run_model(l->model, l->data.inputs, ro);
      ASSERT_TRUE(arena.is_ok()) << arena.status().message();
      EXPECT_EQ(stats.arena_bytes, plan->arena_bytes);
      EXPECT_EQ(test::outputs_difference(*arena, *simple, test::kBitwise), "")
          << "the arena (io_in_arena=" << io_in_arena << ") vs one buffer per value";
      std::printf(
          "[ shared ] %-20s arena run (io_in_arena=%d): %zu values, %zu bytes, outputs "
          "bitwise equal\n",
          name.c_str(), io_in_arena ? 1 : 0, plan->values.size(), plan->arena_bytes);
    }
  }
}

// bert_mini's ids index an 8192-row embedding: random ids derived from the Gather are valid, and
// the model runs on them (an id past the table is an error, so this also proves the range).
TEST(SharedModels, RandomIdsForBertMiniStayInsideTheVocabulary) {
  XOPT_REQUIRE_SHARED(shared);
  auto model = ir::load_model(test::shared_model_path("bert_mini"));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const ir::Value* ids = model->graph->runtime_inputs().at(0);
  auto range = input_value_range(*model->graph, *ids, {});
  ASSERT_TRUE(range.is_ok()) << range.status().message();
  EXPECT_EQ(range->lo, 0.0);
  EXPECT_EQ(range->hi, 8191.0) << range->origin;
  RandomInputOptions ro;
  ro.seed = 7;
  auto in = random_inputs(*model->graph, ro);
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  const ir::Tensor& t = in->at(ids->name());
  ASSERT_EQ(t.dims(), (std::vector<int64_t>{1, 128}));
  int64_t hi = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    ASSERT_GE(t.as_int64(i), 0);
    ASSERT_LE(t.as_int64(i), 8191);
    hi = std::max(hi, t.as_int64(i));
  }
  EXPECT_GT(hi, 4096) << "ids should spread over the vocabulary";
  auto out = run_for_validation(*model, *in);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->tensors.at(0).dims(), (std::vector<int64_t>{1, 128, 256}));
}

}  // namespace
}  // namespace xopt::exec
