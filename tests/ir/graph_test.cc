// Graph editing API: use lists, replacing uses, removing nodes, provenance, text printing.
#include <gtest/gtest.h>

#include "ir/onnx_io.h"
#include "ir/text.h"
#include "ir/verifier.h"

namespace xopt {
namespace {

const char* kChain = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4] x) => (float[1,4] y) <float[4] b = {1,2,3,4}> {
  t = Add(x, b)
  u = Identity(t)
  y = Relu(u)
}
)";

TEST(Graph, UseListsFollowEdits) {
  auto m = ir::parse_model_text(kChain);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  ir::Graph& g = *m->graph;
  ir::Value* t = g.find_value("t");
  ir::Value* u = g.find_value("u");
  ASSERT_EQ(t->uses().size(), 1u);
  ir::Node* identity = u->producer();
  g.replace_all_uses(u, t);
  EXPECT_TRUE(u->uses().empty());
  EXPECT_EQ(t->uses().size(), 2u);
  g.remove_node(identity);
  EXPECT_EQ(t->uses().size(), 1u);
  EXPECT_EQ(g.find_value("u"), nullptr);
  EXPECT_TRUE(ir::verify(g).is_ok());
  EXPECT_EQ(ir::print_graph_text(*m), R"(g (float[1,4] x) => (float[1,4] y)
   <float[4] b = {1,2,3,4}>
{
   t = Add(x, b)
   y = Relu(t)
}
)");
}

TEST(Graph, ReplacingAGraphOutputMovesTheOutput) {
  auto m = ir::parse_model_text(kChain);
  ASSERT_TRUE(m.is_ok());
  ir::Graph& g = *m->graph;
  ir::Value* y = g.find_value("y");
  ir::Value* u = g.find_value("u");
  g.replace_all_uses(y, u);
  EXPECT_TRUE(u->is_graph_output());
  EXPECT_FALSE(y->is_graph_output());
  EXPECT_EQ(g.outputs()[0], u);
}

TEST(Graph, NewNodesRecordProvenanceAndUniqueNames) {
  auto m = ir::parse_model_text(kChain);
  ASSERT_TRUE(m.is_ok());
  ir::Graph& g = *m->graph;
  ir::Node* add = g.find_value("t")->producer();
  add->set_name("add0");
  ir::Node* relu = g.find_value("y")->producer();
  relu->set_name("relu0");
  ir::Node* fused = g.add_node("Relu", {g.find_value("x")}, {"t"}, "", add);
  fused->add_provenance(*add);
  fused->add_provenance(*relu);
  EXPECT_NE(fused->output(0)->name(), "t") << "names are made unique";
  EXPECT_EQ(fused->provenance(), (std::vector<std::string>{"add0", "relu0"}));
  EXPECT_NE(fused->describe().find("add0, relu0"), std::string::npos) << fused->describe();
}

TEST(Graph, AttributesReadAndWrite) {
  auto m = ir::parse_model_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,8,8] x, float[4,3,3,3] w) => (float[1,4,8,8] y) {
  y = Conv <pads = [1,1,1,1], auto_pad = "NOTSET", group = 1> (x, w)
}
)");
  ASSERT_TRUE(m.is_ok());
  ir::Node* conv = *m->graph->nodes().begin();
  EXPECT_EQ(conv->attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->attr_int("group", 7), 1);
  EXPECT_EQ(conv->attr_int("missing", 7), 7);
  EXPECT_EQ(conv->attr_string("auto_pad", ""), "NOTSET");
  conv->set_attr("strides", std::vector<int64_t>{2, 2});
  conv->set_attr("group", int64_t{2});
  EXPECT_EQ(conv->attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->attr_int("group", 0), 2);
  conv->remove_attr("pads");
  EXPECT_FALSE(conv->has_attr("pads"));
}

TEST(Graph, OpsetLookupAndRequire) {
  auto m = ir::parse_model_text(kChain);
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(m->graph->opset(""), 17);
  EXPECT_EQ(m->graph->opset("com.microsoft"), 0);
  m->graph->require_opset("com.microsoft", 1);
  EXPECT_EQ(m->graph->opset("com.microsoft"), 1);
  onnx::ModelProto p = ir::model_to_proto(*m);
  EXPECT_EQ(p.opset_import_size(), 2);
}

TEST(Graph, MetadataRoundTrips) {
  auto m = ir::parse_model_text(kChain);
  ASSERT_TRUE(m.is_ok());
  m->set_metadata("xopt.memory_plan", "{}");
  m->set_metadata("xopt.memory_plan", "{\"v\":1}");
  auto p = ir::model_to_proto(*m);
  auto back = ir::model_from_proto(p);
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(back->metadata("xopt.memory_plan").value_or(""), "{\"v\":1}");
}

}  // namespace
}  // namespace xopt
