// fold,fuse on the shared CNNs: the outputs stay those of the original model (CPU executor, rtol
// 1e-4 of the output's scale, tests/util/compare_outputs.h), the result passes the ONNX checker,
// and the conv blocks are fused. Prints node counts before -> after and the counters. With
// XOPT_SAVE_OPTIMIZED=DIR the optimized models are written there as NAME.opt.onnx
// (tests/fuse_conv/check_with_onnxruntime.py runs them in onnxruntime).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "onnx/checker.h"
#include "passes/pass_manager.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

using test::count;
using test::op_counts;

namespace fs = std::filesystem;

// Adds reading a Conv result: residuals left unfused.
int adds_after_conv(const ir::Graph& g) {
  int n = 0;
  for (const ir::Node* add : g.nodes()) {
    if (add->op_type() != "Add" || !add->domain().empty()) continue;
    for (const ir::Value* v : add->inputs()) {
      const ir::Node* p = v == nullptr ? nullptr : v->producer();
      if (p != nullptr && p->op_type() == "Conv" && p->domain().empty()) {
        ++n;
        break;
      }
    }
  }
  return n;
}

struct Optimized {
  std::map<std::string, int> before, after;
  int adds_after_conv = -1;
  passes::PipelineStats stats;
};

// Runs fold,fuse on the model, checks the outputs against the original's and returns the op counts.
Optimized optimize_and_compare(const std::string& name) {
  Optimized r;
  const std::string path = test::shared_model_path(name);
  if (path.empty()) return r;
  auto original = ir::load_model(path);
  EXPECT_TRUE(original.is_ok()) << original.status().message();
  auto model = ir::load_model(path);
  if (!original.is_ok() || !model.is_ok()) return r;
  auto in = exec::conformance::read_tensor_file(
      (fs::path(path).parent_path() / "test_data_set_0" / "input_0.pb").string());
  EXPECT_TRUE(in.is_ok()) << in.status().message();
  if (!in.is_ok()) return r;

  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  EXPECT_TRUE(pm.add_pipeline("fold,fuse").is_ok());
  passes::PassContext ctx;
  passes::PipelineStats stats;
  auto t0 = std::chrono::steady_clock::now();
  Status s = pm.run(*model, ctx, &stats);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!s.is_ok()) return r;
  r.before = op_counts(*original->graph);
  r.after = op_counts(*model->graph);
  r.adds_after_conv = adds_after_conv(*model->graph);
  r.stats = stats;

  std::printf("%s: fold,fuse %zu -> %zu nodes, %zu -> %zu initializers, %.3f s (verify each)\n",
              name.c_str(), original->graph->num_nodes(), model->graph->num_nodes(),
              original->graph->initializers().size(), model->graph->initializers().size(), secs);
  for (const auto& p : stats.passes) {
    if (p.counters.empty()) continue;
    std::string counters;
    for (const auto& [k, v] : p.counters) counters += " " + k + "=" + std::to_string(v);
    std::printf("  %s:%s\n", p.name.c_str(), counters.c_str());
  }
  std::string ops;
  for (const auto& [op, n] : r.after) ops += " " + op + "=" + std::to_string(n);
  std::printf("  ops after:%s\n", ops.c_str());

  onnx::ModelProto proto = ir::model_to_proto(*model);
  try {
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "ONNX checker: " << e.what();
  }
  if (const char* dir = std::getenv("XOPT_SAVE_OPTIMIZED")) {
    Status saved = ir::save_model(*model, (fs::path(dir) / (name + ".opt.onnx")).string());
    EXPECT_TRUE(saved.is_ok()) << saved.message();
  }

  std::map<std::string, ir::Tensor> inputs = {
      {original->graph->runtime_inputs().at(0)->name(), *in}};
  test::expect_same_outputs(*original, *model, inputs);
  return r;
}

// The model NAME after fold,fuse, its test_data_set_0 input and the original model's outputs.
struct FusedModel {
  ir::Model model;
  std::map<std::string, ir::Tensor> inputs;
  std::vector<ir::Tensor> reference;
};
std::optional<FusedModel> fuse_for_mutation(const std::string& name) {
  const std::string path = test::shared_model_path(name);
  auto original = ir::load_model(path);
  auto model = ir::load_model(path);
  EXPECT_TRUE(original.is_ok() && model.is_ok());
  auto in = exec::conformance::read_tensor_file(
      (fs::path(path).parent_path() / "test_data_set_0" / "input_0.pb").string());
  EXPECT_TRUE(in.is_ok());
  if (!original.is_ok() || !model.is_ok() || !in.is_ok()) return std::nullopt;
  passes::PassManager pm;
  EXPECT_TRUE(pm.add_pipeline("fold,fuse").is_ok());
  passes::PassContext ctx;
  Status s = pm.run(*model, ctx);
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!s.is_ok()) return std::nullopt;
  std::map<std::string, ir::Tensor> inputs = {
      {original->graph->runtime_inputs().at(0)->name(), *in}};
  auto want = exec::run_model(*original, inputs);
  EXPECT_TRUE(want.is_ok()) << want.status().message();
  if (!want.is_ok()) return std::nullopt;
  return FusedModel{std::move(*model), std::move(inputs), std::move(*want)};
}

// What expect_same_outputs would say about `m` ("" = it passes).
std::string difference(const FusedModel& f, const ir::Model& m) {
  auto got = exec::run_model(m, f.inputs);
  if (!got.is_ok()) return got.status().message();
  return test::outputs_difference(*got, f.reference);
}

TEST(FuseConvModels, Resnet18) {
  XOPT_REQUIRE_SHARED(shared);
  Optimized r = optimize_and_compare("resnet18");
  EXPECT_EQ(count(r.after, "BatchNormalization"), 0);
  EXPECT_EQ(count(r.after, "Relu"), 0);
  EXPECT_EQ(count(r.after, "Identity"), 0);
  EXPECT_EQ(count(r.after, "Conv"), 3);  // the downsample convs are the residual's other side
  EXPECT_EQ(count(r.after, "com.microsoft.FusedConv"), 17);
  // Every residual Add is followed by a Relu and goes in with it.
  EXPECT_EQ(count(r.after, "Add"), 0);
  EXPECT_EQ(test::counter(r.stats, "fuse-conv-activation", "Relu+residual"), 8);
  EXPECT_EQ(test::counter(r.stats, "fuse-conv-activation", "residual"), 0);
}

TEST(FuseConvModels, MobilenetV2) {
  XOPT_REQUIRE_SHARED(shared);
  Optimized r = optimize_and_compare("mobilenet_v2");
  EXPECT_EQ(count(r.after, "BatchNormalization"), 0);
  EXPECT_EQ(count(r.after, "Clip"), 0);
  EXPECT_EQ(count(r.after, "Constant"), 0);
  // The ten linear bottlenecks' Conv + residual Add become FusedConv with Z and no activation.
  EXPECT_EQ(count(r.after, "Add"), 0);
  EXPECT_EQ(r.adds_after_conv, 0);
  EXPECT_EQ(test::counter(r.stats, "fuse-conv-activation", "residual"), count(r.before, "Add"));
  EXPECT_EQ(count(r.after, "com.microsoft.FusedConv"),
            count(r.before, "Clip") + count(r.before, "Add"));
}

// The comparison the tests above rely on can fail: a fused mobilenet_v2 with every Clip(0,6)
// dropped from its FusedConv nodes, or with the last conv's weights 10% off, computes something
// else and is caught. (Against the old ~8e-9 reference, both passed with rtol 1e-4, atol 1e-5.)
TEST(FuseConvModels, MobilenetV2ComparisonCatchesBrokenFusions) {
  XOPT_REQUIRE_SHARED(shared);
  auto fused = fuse_for_mutation("mobilenet_v2");
  ASSERT_TRUE(fused.has_value());
  EXPECT_EQ(difference(*fused, fused->model), "");

  auto dropped = fuse_for_mutation("mobilenet_v2");
  ASSERT_TRUE(dropped.has_value());
  int clips = 0;
  for (ir::Node* n : dropped->model.graph->nodes()) {
    if (n->op_type() != "FusedConv" || !n->has_attr("activation")) continue;
    n->remove_attr("activation");
    n->remove_attr("activation_params");
    ++clips;
  }
  EXPECT_EQ(clips, 35);
  EXPECT_NE(difference(*dropped, dropped->model), "") << "Clip dropped from every FusedConv";

  auto perturbed = fuse_for_mutation("mobilenet_v2");
  ASSERT_TRUE(perturbed.has_value());
  ir::Node* last_conv = nullptr;
  for (ir::Node* n : perturbed->model.graph->nodes())
    if (n->op_type() == "FusedConv" || n->op_type() == "Conv") last_conv = n;
  ASSERT_NE(last_conv, nullptr);
  ir::Tensor* w = last_conv->input(1)->mutable_initializer();
  ASSERT_NE(w, nullptr);
  for (int64_t i = 0; i < w->numel(); ++i) w->mutable_data<float>()[i] *= 1.1f;
  EXPECT_NE(difference(*perturbed, perturbed->model), "") << "last conv's weights 10% off";
}

TEST(FuseConvModels, Squeezenet) {
  XOPT_REQUIRE_SHARED(shared);
  Optimized r = optimize_and_compare("squeezenet1_1");
  EXPECT_EQ(count(r.after, "Relu"), 0);
  EXPECT_EQ(count(r.after, "com.microsoft.FusedConv"), count(r.before, "Conv"));
}

TEST(FuseConvModels, Shufflenet) {
  XOPT_REQUIRE_SHARED(shared);
  Optimized r = optimize_and_compare("shufflenet_v2_x1_0");
  EXPECT_EQ(count(r.after, "BatchNormalization"), 0);
  EXPECT_EQ(count(r.after, "Relu"), 0);
  // Channel shuffles become Concat + Reshape; each x[:, :c], x[:, c:] pair becomes one Split.
  EXPECT_EQ(count(r.after, "Transpose"), 0);
  EXPECT_EQ(count(r.after, "Slice"), 0);
  EXPECT_EQ(count(r.after, "Split"), count(r.before, "Slice") / 2);
}

}  // namespace
}  // namespace xopt
