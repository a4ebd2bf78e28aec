// The shared models run on the CPU reference executor: outputs close to PyTorch's (rtol 1e-4 of
// the output's scale, tests/util/compare_outputs.h), and identical in simple mode and in a
// one-value-after-another arena.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "executor/cpu/conformance.h"
#include "executor/cpu/kernel.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/test_util.h"

namespace xopt::exec {
namespace {

namespace fs = std::filesystem;

// Ops of the model without a CPU kernel at the model's opset ("" when all are there).
std::string missing_kernels(const ir::Graph& g) {
  std::set<std::string> missing;
  for (const ir::Node* n : g.nodes())
    if (KernelRegistry::global().find(n->domain(), n->op_type(), n->opset()) == nullptr)
      missing.insert((n->domain().empty() ? "" : n->domain() + ".") + n->op_type() + " (opset " +
                     std::to_string(n->opset()) + ")");
  std::string s;
  for (const auto& m : missing) s += (s.empty() ? "" : ", ") + m;
  return s;
}

TEST(SharedModels, SimpleAndArenaModesAgreeAndMatchPyTorch) {
  XOPT_REQUIRE_SHARED(shared);
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    const std::string path = test::shared_model_path(name);
    auto model = ir::load_model(path);
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const std::string missing = missing_kernels(*model->graph);
    if (!missing.empty()) {
      ADD_FAILURE() << name << " needs ops that have no CPU kernel yet: " << missing;
      continue;
    }
    const fs::path data = fs::path(path).parent_path() / "test_data_set_0";
    auto in = conformance::read_tensor_file((data / "input_0.pb").string());
    auto want = conformance::read_tensor_file((data / "output_0.pb").string());
    ASSERT_TRUE(in.is_ok() && want.is_ok());
    std::map<std::string, ir::Tensor> inputs = {
        {model->graph->runtime_inputs().at(0)->name(), *in}};

    auto simple = run_model(*model, inputs);
    ASSERT_TRUE(simple.is_ok()) << simple.status().message();
    // The design target: max relative error 1e-4 against PyTorch in fp32.
    EXPECT_EQ(test::output_difference((*simple)[0], *want, {}, "vs PyTorch"), "");
    EXPECT_EQ(test::uncaught_mutations((*simple)[0], *want), "");

    for (bool io : {false, true}) {
      auto plan = sequential_plan(*model, inputs, io);
      ASSERT_TRUE(plan.is_ok()) << plan.status().message();
      RunOptions ro;
      ro.plan = &*plan;
      auto arena = run_model(*model, inputs, ro);
      ASSERT_TRUE(arena.is_ok()) << arena.status().message();
      EXPECT_EQ(test::outputs_difference(*arena, *simple, test::kBitwise), "")
          << "arena mode vs simple mode (io_in_arena=" << io << ")";
    }
  }
}

}  // namespace
}  // namespace xopt::exec
