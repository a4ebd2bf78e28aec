// cleanup on the shared models: the graph verifies after every pass, shrinks, keeps its interface,
// and computes bit for bit what the original computes (CPU reference executor, test_data_set_0).
#include <filesystem>
#include <fstream>

#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/tensor_proto.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/pass_golden.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

onnx::TensorProto read_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto t;
  EXPECT_TRUE(t.ParseFromIstream(&in)) << path;
  return t;
}

TEST(CleanupSharedModels, SameOutputsFewerNodes) {
  XOPT_REQUIRE_SHARED(shared);
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    std::string path = test::shared_model_path(name);
    auto original = ir::load_model(path);
    ASSERT_TRUE(original.is_ok()) << original.status().message();
    auto model = ir::load_model(path);
    ASSERT_TRUE(model.is_ok());

    passes::PassManager pm(passes::PassManagerOptions{true, {}, {}, 16, {}});
    ASSERT_TRUE(pm.add_pipeline("cleanup").is_ok());
    passes::PassContext ctx;
    passes::PipelineStats stats;
    Status s = pm.run(*model, ctx, &stats);
    ASSERT_TRUE(s.is_ok()) << s.message();
    EXPECT_LT(stats.nodes_after, stats.nodes_before);
    EXPECT_TRUE(stats.groups.at(0).converged);
    for (const ir::Node* n : model->graph->nodes())
      EXPECT_FALSE(n->is("Identity")) << n->describe();
    ASSERT_EQ(model->graph->outputs().size(), original->graph->outputs().size());
    for (size_t i = 0; i < model->graph->outputs().size(); ++i)
      EXPECT_EQ(model->graph->outputs()[i]->name(), original->graph->outputs()[i]->name());

    // Cleanup changes no arithmetic, so the outputs must be identical, not merely close.
    std::map<std::string, ir::Tensor> inputs;
    auto runtime_inputs = original->graph->runtime_inputs();
    for (size_t i = 0; i < runtime_inputs.size(); ++i) {
      std::string file = std::filesystem::path(path).parent_path().string() +
                         "/test_data_set_0/input_" + std::to_string(i) + ".pb";
      auto t = ir::tensor_from_proto(read_tensor_file(file), "");
      ASSERT_TRUE(t.is_ok()) << file;
      inputs[runtime_inputs[i]->name()] = *t;
    }
    auto expected = exec::run_model(*original, inputs);
    if (!expected.is_ok()) {
      ADD_FAILURE() << "the CPU executor cannot run " << name << ": "
                    << expected.status().message();
      continue;
    }
    auto got = exec::run_model(*model, inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    EXPECT_EQ(test::outputs_difference(*got, *expected, test::kBitwise), "");
  }
}

}  // namespace
}  // namespace xopt
