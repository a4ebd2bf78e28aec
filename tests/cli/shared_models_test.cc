// xopt --passes=cleanup on every shared model: succeeds, prints its statistics, leaves no Identity,
// writes a model the ONNX checker accepts, and does not touch the input.
#include <functional>

#include "ir/onnx_io.h"
#include "ir/verifier.h"
#include "onnx/checker.h"
#include "tests/cli/cli_util.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

TEST(CliSharedModels, CleanupEveryModel) {
  XOPT_REQUIRE_SHARED(shared);
  test::TempDir dir;
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    std::string model = test::shared_model_path(name);
    auto stamp = std::filesystem::last_write_time(model);
    size_t hash = std::hash<std::string>{}(test::read_file(model));
    std::string out = dir / (name + ".opt.onnx");
    auto r = test::run_xopt({"--passes=cleanup", "--verify-each", model, "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("eliminate-dead-code"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("group cleanup:"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;

    auto m = ir::load_model(out);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    EXPECT_TRUE(ir::verify(*m->graph).is_ok());
    for (const ir::Node* n : m->graph->nodes()) {
      EXPECT_FALSE(n->is("Identity")) << n->describe();
      EXPECT_FALSE(n->is("Dropout")) << n->describe();
    }
    auto original = ir::load_model(model);
    ASSERT_TRUE(original.is_ok());
    ASSERT_EQ(m->graph->outputs().size(), original->graph->outputs().size());
    for (size_t i = 0; i < m->graph->outputs().size(); ++i)
      EXPECT_EQ(m->graph->outputs()[i]->name(), original->graph->outputs()[i]->name());
    ASSERT_EQ(m->graph->inputs().size(), original->graph->inputs().size());
    for (size_t i = 0; i < m->graph->inputs().size(); ++i)
      EXPECT_EQ(m->graph->inputs()[i]->name(), original->graph->inputs()[i]->name());
    EXPECT_LE(m->graph->num_nodes(), original->graph->num_nodes());

    onnx::ModelProto proto = test::read_proto_file(out);
    try {
      onnx::checker::check_model(proto);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "ONNX checker: " << e.what();
    }
    EXPECT_EQ(std::filesystem::last_write_time(model), stamp);
    EXPECT_EQ(std::hash<std::string>{}(test::read_file(model)), hash) << "input unchanged";
  }
}

}  // namespace
}  // namespace xopt
