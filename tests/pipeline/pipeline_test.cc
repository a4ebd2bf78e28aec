// pipeline::optimize on a small model written in ONNX text: the outcome (model, statistics, plan,
// provenance, files), the observer's view of every pass, and errors as a Status of the right
// category naming the file.
#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/provenance.h"
#include "ir/text.h"
#include "pipeline/request.h"
#include "planner/annotate.h"
#include "planner/memory_plan.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

// Conv -> BatchNormalization -> Relu with a symbolic batch: fold,fuse,plan fuses all three.
constexpr const char* kConvBnRelu = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N,2,5,5] x) => (float[N,3,5,5] y)
  <float[3,2,3,3] w = {0.1,-0.2,0.3,0.05,0.4,-0.1,0.2,0.1,-0.3,0.25,0.15,-0.05,0.2,0.3,-0.2,0.1,0.05,0.4,
                       -0.1,0.2,0.3,-0.25,0.1,0.2,0.05,-0.15,0.3,0.2,0.1,-0.2,0.3,0.05,0.4,-0.1,0.2,0.1,
                       -0.3,0.25,0.15,-0.05,0.2,0.3,-0.2,0.1,0.05,0.4,-0.1,0.2,0.3,-0.25,0.1,0.2,0.05,-0.15},
   float[3] scale = {1.5, 0.5, 2.0}, float[3] bias = {0.1, -0.2, 0.3},
   float[3] mean = {0.05, 0.1, -0.1}, float[3] var = {1.0, 0.5, 2.0}> {
  c = Conv <pads = [1, 1, 1, 1]> (x, w)
  b = BatchNormalization (c, scale, bias, mean, var)
  y = Relu (b)
}
)";

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("xopt_pipeline_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto m = ir::parse_model_text(kConvBnRelu);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    // Named nodes, as exporters write them: provenance is recorded by name.
    for (ir::Node* n : m->graph->node_list()) n->set_name("orig_" + n->op_type());
    model_ = (dir_ / "m.onnx").string();
    ASSERT_TRUE(ir::save_model(*m, model_).is_ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  pipeline::Options options(const std::string& passes = "fold,fuse,plan") const {
    pipeline::Options o;
    o.model = model_;
    o.output = (dir_ / "m.opt.onnx").string();
    o.passes = passes;
    o.shapes.batch = 2;
    return o;
  }

  fs::path dir_;
  std::string model_;
};

TEST_F(PipelineTest, OptionsInOutcomeOut) {
  auto out = pipeline::optimize(options());
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->output, options().output);
  EXPECT_EQ(out->stats.nodes_before, 3);
  EXPECT_EQ(out->stats.nodes_after, 1);  // one FusedConv (Conv + BN + Relu)
  EXPECT_EQ(out->model.graph->num_nodes(), 1u);
  ASSERT_TRUE(out->plan.has_value());
  EXPECT_EQ(out->plan->plan.batch, 2);
  EXPECT_EQ(out->plan->plan.node_order.size(), 1u);
  EXPECT_FALSE(out->offload.has_value());
  EXPECT_FALSE(out->measured.has_value());
  // The written file is the outcome's model: its plan and its provenance.
  auto saved = ir::load_model(out->output);
  ASSERT_TRUE(saved.is_ok()) << saved.status().message();
  auto plan = planner::read_plan(*saved);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(planner::plan_to_json(*plan), planner::plan_to_json(out->plan->plan));
  // The plan group's passes (split-batch, reorder) do not carry provenance yet: checked after
  // fold,fuse, whose fused node stands for all three.
  out = pipeline::optimize(options("fold,fuse"));
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  saved = ir::load_model(out->output);
  ASSERT_TRUE(saved.is_ok()) << saved.status().message();
  ASSERT_EQ(out->provenance.size(), 1u);
  std::vector<std::string> originals = out->provenance.begin()->second;
  std::sort(originals.begin(), originals.end());
  EXPECT_EQ(originals,
            (std::vector<std::string>{"orig_BatchNormalization", "orig_Conv", "orig_Relu"}));
  auto stored = ir::read_provenance(*saved);
  ASSERT_TRUE(stored.is_ok()) << stored.status().message();
  EXPECT_EQ(*stored, out->provenance);
}

// The optimized model computes what the original does (relative to the outputs' scale).
TEST_F(PipelineTest, OutcomeRunsLikeTheOriginal) {
  auto out = pipeline::optimize(options("fold,fuse"));
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  auto original = ir::load_model(model_);
  ASSERT_TRUE(original.is_ok());
  ASSERT_TRUE(ir::bind_input_shapes(*original->graph, options().shapes).is_ok());
  ir::Tensor x(ir::DType::kFloat, {2, 2, 5, 5});
  float* p = static_cast<float*>(x.mutable_raw_data());
  for (int i = 0; i < 100; ++i) p[i] = static_cast<float>((i * 37) % 17) / 8.0f - 1.0f;
  auto a = exec::run_model(*original, {{"x", x}});
  auto b = exec::run_model(out->model, {{"x", x}});
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  const float* ya = static_cast<const float*>((*a)[0].raw_data());
  const float* yb = static_cast<const float*>((*b)[0].raw_data());
  float max_ref = 0, max_diff = 0;
  for (int i = 0; i < 150; ++i) {
    max_ref = std::max(max_ref, std::abs(ya[i]));
    max_diff = std::max(max_diff, std::abs(ya[i] - yb[i]));
  }
  EXPECT_GT(max_ref, 0.1f);
  EXPECT_LE(max_diff, 1e-6f + 1e-5f * max_ref);
}

TEST_F(PipelineTest, ObserverSeesEveryPassAndTheLongSteps) {
  std::vector<std::string> passes, steps;
  pipeline::Observer obs;
  obs.pass_start = [&](const std::string& pass, size_t) { passes.push_back(pass); };
  obs.step = [&](const std::string& s) { steps.push_back(s); };
  auto out = pipeline::optimize(options(), &obs);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  // Every pass that ran, as many times as it ran (the statistics count the runs).
  std::map<std::string, int64_t> seen;
  for (const std::string& p : passes) ++seen[p];
  ASSERT_FALSE(out->stats.passes.empty());
  for (const passes::PassStats& s : out->stats.passes) EXPECT_EQ(seen[s.name], s.runs) << s.name;
  EXPECT_EQ(seen.size(), out->stats.passes.size());
  ASSERT_GE(steps.size(), 2u);
  EXPECT_EQ(steps.front(), "loading " + model_);
  EXPECT_EQ(steps.back(), "writing " + options().output);
}

TEST_F(PipelineTest, NoOutputWritesNothing) {
  pipeline::Options o = options();
  o.output.clear();
  auto out = pipeline::optimize(o);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_TRUE(out->output.empty());
  EXPECT_FALSE(fs::exists(options().output));
  EXPECT_EQ(out->model.graph->num_nodes(), 1u);
}

TEST_F(PipelineTest, ErrorsComeBackAsStatus) {
  pipeline::Options o = options("fold,no-such-pass");
  auto bad_pass = pipeline::optimize(o);
  ASSERT_FALSE(bad_pass.is_ok());
  EXPECT_EQ(bad_pass.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_pass.status().message().find("no-such-pass"), std::string::npos);

  o = options();
  o.pass_options.plan_alignment = 3;
  auto bad_align = pipeline::optimize(o);
  ASSERT_FALSE(bad_align.is_ok());
  EXPECT_EQ(bad_align.status().message(), "--align must be a power of two, not 3");

  o = options();
  o.model = (dir_ / "missing.onnx").string();
  auto missing = pipeline::optimize(o);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message().rfind(o.model, 0), 0u) << missing.status().message();

  o = options();
  o.shapes.input_shapes["x"] = {2, 7, 5, 5};  // 7 channels where the model has 2
  auto bad_shape = pipeline::optimize(o);
  ASSERT_FALSE(bad_shape.is_ok());
  EXPECT_EQ(bad_shape.status().message().rfind(model_ + ": ", 0), 0u)
      << bad_shape.status().message();

  o = options();
  o.output = model_;
  auto overwrite = pipeline::optimize(o);
  ASSERT_FALSE(overwrite.is_ok());
  EXPECT_EQ(overwrite.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(options().output));  // nothing written on any error
}

TEST_F(PipelineTest, ReportNeedsThePlan) {
  pipeline::Options o = options("fold,fuse");
  o.report_dir = (dir_ / "report").string();
  auto out = pipeline::optimize(o);
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().message(),
            "--report needs the plan-memory pass (e.g. --passes=fold,fuse,plan)");
}

TEST_F(PipelineTest, RequestCarriesTheFlagsText) {
  pipeline::Request r;
  r.model = model_;
  r.passes = "fold,fuse,plan";
  r.batch = 2;
  r.align = 64;
  r.fold_max_bytes = "4MiB";
  r.mem_budget = "50%";
  r.disable = {"cse,fold-shapes"};
  r.precision.keep_fp32 = {"Softmax"};
  auto o = pipeline::options_from_request(r);
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(o->output, (dir_ / "m.opt.onnx").string());
  EXPECT_EQ(o->pass_options.plan_alignment, 64u);
  EXPECT_EQ(o->pass_options.fold_max_bytes, size_t{4} << 20);
  ASSERT_TRUE(o->mem_budget.has_value());
  EXPECT_EQ(o->mem_budget->percent, 50.0);
  EXPECT_EQ(o->disable, (std::vector<std::string>{"cse", "fold-shapes"}));
  EXPECT_EQ(o->pass_options.precision.keep_fp32, std::vector<std::string>{"Softmax"});
  ASSERT_TRUE(o->shapes.batch.has_value());
  EXPECT_EQ(*o->shapes.batch, 2);

  r.fold_max_bytes = "4 parsecs";
  auto bad = pipeline::options_from_request(r);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message().rfind("--fold-max-bytes: ", 0), 0u);
  r.fold_max_bytes.clear();
  r.mem_budget = "150%";
  bad = pipeline::options_from_request(r);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(), "--mem-budget '150%': a percentage must be 0% to 100%");
}

}  // namespace
}  // namespace xopt
