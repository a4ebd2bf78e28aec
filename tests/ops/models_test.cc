// Shape inference on real models: the six shared PyTorch exports and the light model-zoo topologies
// come out fully static, with graph outputs shaped like the reference outputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/ops/ops_test_util.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

// Loads a model with every declared intermediate/output shape removed.
ir::Model load_stripped(const std::string& path) {
  onnx::ModelProto m = test::read_proto_file(path);
  test::strip_declared_shapes(m);
  auto model = ir::model_from_proto(std::move(m), fs::path(path).parent_path().string(), path);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  return model.is_ok() ? std::move(model).value() : ir::Model();
}

std::string unknown_list(const ir::Graph& g) {
  std::string s;
  int n = 0;
  for (const ir::Value* v : ir::values_with_unknown_shape(g))
    if (++n <= 10) s += " " + v->name() + v->shape().to_string();
  return s;
}

ir::InferOptions strict() {
  ir::InferOptions o;
  o.strict = true;
  return o;
}

void expect_output_like(const ir::Value* out, const std::string& pb) {
  onnx::TensorProto ref;
  ASSERT_TRUE(test::read_tensor_file(pb, &ref)) << pb;
  EXPECT_EQ(out->shape(), ir::Shape::of({ref.dims().begin(), ref.dims().end()}))
      << out->name() << " vs " << pb << " " << test::dims_string(ref);
  EXPECT_EQ(static_cast<int>(out->dtype()), ref.data_type()) << out->name();
}

int count_node_values(const ir::Graph& g) {
  int n = 0;
  for (const ir::Node* node : g.nodes())
    for (const ir::Value* v : node->outputs()) n += v != nullptr;
  return n;
}

TEST(OpsModels, SharedModelsAreStaticAndMatchPyTorchOutputs) {
  XOPT_REQUIRE_SHARED(shared);
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    ir::Model model = load_stripped(test::shared_model_path(name));
    ir::Graph& g = *model.graph;
    Status s = ir::infer_shapes(g, strict());
    ASSERT_TRUE(s.is_ok()) << s.message();
    EXPECT_TRUE(ir::values_with_unknown_shape(g).empty()) << unknown_list(g);
    ASSERT_EQ(g.outputs().size(), 1u);
    expect_output_like(g.outputs()[0], shared + "/models/" + name + "/test_data_set_0/output_0.pb");
    std::printf("%-20s %4d node outputs, all static; output %s\n", name.c_str(),
                count_node_values(g), g.outputs()[0]->shape().to_string().c_str());
  }
}

TEST(OpsModels, LightModelZooTopologiesAreStatic) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string dir = shared + "/onnx-conformance/light";
  int models = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".onnx") continue;
    SCOPED_TRACE(path);
    ++models;
    ir::Model model = load_stripped(path);
    ir::Graph& g = *model.graph;
    Status s = ir::infer_shapes(g, strict());
    ASSERT_TRUE(s.is_ok()) << s.message();
    EXPECT_TRUE(ir::values_with_unknown_shape(g).empty()) << unknown_list(g);
    std::string ref = path.substr(0, path.size() - 5) + "_output_0.pb";
    expect_output_like(g.outputs()[0], ref);
  }
  EXPECT_EQ(models, 9);
}

// With the batch dimension made symbolic, every value keeps "N" (or a known size) through the
// shape subgraphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), and --batch makes it static.
// Three exports bake batch 1 into Reshape targets (constants): shufflenet's channel shuffle
// ([1,2,58,28,28]) and the attention heads of bert_mini and gpt_nano ([seq, 1*heads, head_size]);
// those models only run at batch 1, so batch 4 must be an error naming the Reshape.
TEST(OpsModels, SymbolicBatchPropagatesThroughSharedModels) {
  XOPT_REQUIRE_SHARED(shared);
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    const bool batch_one_only =
        name == "shufflenet_v2_x1_0" || name == "bert_mini" || name == "gpt_nano";
    ir::Model model = load_stripped(test::shared_model_path(name));
    ir::Graph& g = *model.graph;
    ir::Value* in = g.runtime_inputs().at(0);
    ir::Shape s = in->shape();
    s[0] = ir::Dim::symbolic("N");
    in->set_shape(s);
    Status st = ir::infer_shapes(g, strict());
    ASSERT_TRUE(st.is_ok()) << st.message();
    int with_n = 0;
    for (const ir::Value* v : ir::values_with_unknown_shape(g)) {
      ASSERT_TRUE(v->shape().has_rank()) << v->name();
      for (const ir::Dim& d : v->shape().dims()) {
        EXPECT_TRUE(d.is_known() || d.symbol == "N") << v->name() << " " << v->shape().to_string();
        with_n += d.symbol == "N";
      }
    }
    EXPECT_GT(with_n, 10);
    if (!batch_one_only) {
      EXPECT_EQ(g.outputs()[0]->shape()[0], ir::Dim::symbolic("N"))
          << g.outputs()[0]->shape().to_string();
    }

    ir::ShapeBindings b;
    b.batch = 4;
    ASSERT_TRUE(ir::bind_input_shapes(g, b).is_ok());
    EXPECT_EQ(in->shape()[0], ir::Dim(4));
    st = ir::infer_shapes(g, strict());
    if (batch_one_only) {
      EXPECT_FALSE(st.is_ok());
      EXPECT_NE(st.message().find("(Reshape): cannot reshape"), std::string::npos) << st.message();
      continue;
    }
    ASSERT_TRUE(st.is_ok()) << st.message();
    EXPECT_TRUE(ir::values_with_unknown_shape(g).empty()) << unknown_list(g);
    EXPECT_EQ(g.outputs()[0]->shape()[0], ir::Dim(4)) << g.outputs()[0]->shape().to_string();
  }
}

}  // namespace
}  // namespace xopt
