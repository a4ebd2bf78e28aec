// A model with 256 MiB of external weights goes through fold,fuse,plan with its weights mapped,
// never copied: every initializer is mapped after loading, still mapped after passes that do not
// change it (a weight read through a Reshape folds into a view of the mapping), and the saved data
// file is byte for byte the input's. Peak resident memory is the benchmark's business
// (bench/huge_model_bench.cc), not this test's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ir/onnx_io.h"
#include "passes/pass_manager.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kHidden = 4096;  // a [kHidden, kHidden] float weight is 64 MiB
constexpr int kLayers = 4;         // 256 MiB in all

void float_type(onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> inputs,
              const std::string& output) {
  auto* n = g->add_node();
  n->set_op_type(op);
  for (auto& i : inputs) n->add_input(i);
  n->add_output(output);
}

// x -> [MatMul + Add + Relu] x kLayers -> Add(Transpose(Constant)) -> y. The weights and biases
// sit in model.onnx.data at 4 KiB aligned offsets, in initializer order, as xopt writes them. The
// last weight is stored flat and reshaped in the graph; it is also last in the file, so the folded
// view (appended to the initializers) saves where it was.
void build_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("huge");
  float_type(g->add_input(), "x", {1, kHidden});
  std::ofstream data(dir / "model.onnx.data", std::ios::binary);
  size_t offset = 0;
  uint32_t s = 12345;
  std::vector<float> buf;
  auto external = [&](const std::string& name, std::vector<int64_t> dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", "model.onnx.data");
    kv("offset", std::to_string(offset));
    kv("length", std::to_string(n * 4));
    buf.resize(n);
    for (float& f : buf) {
      s = s * 1664525u + 1013904223u;
      f = static_cast<float>(static_cast<int32_t>(s >> 8) - (1 << 23)) * 1e-9f;
    }
    data.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(n * 4));
    const size_t end = (offset + n * 4 + 4095) & ~size_t{4095};
    std::vector<char> pad(end - offset - n * 4, 0);
    data.write(pad.data(), static_cast<std::streamsize>(pad.size()));
    offset = end;
  };
  std::string h = "x";
  for (int i = 0; i < kLayers; ++i) {
    const std::string id = std::to_string(i);
    const bool last = i == kLayers - 1;
    if (!last) external("w" + id, {kHidden, kHidden});
    external("b" + id, {kHidden});
    add_node(g, "MatMul", {h, "w" + id}, "mm" + id);
    add_node(g, "Add", {"mm" + id, "b" + id}, "add" + id);
    add_node(g, "Relu", {"add" + id}, "h" + id);
    h = "h" + id;
  }
  const std::string wl = "w" + std::to_string(kLayers - 1);
  external(wl + "_flat", {kHidden * kHidden});
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(kHidden);
  shape->add_int64_data(kHidden);
  add_node(g, "Reshape", {wl + "_flat", "shape"}, wl);
  // A small constant (broadcast over the row) folded into a new initializer, saved inline.
  auto* c = g->add_node();
  c->set_op_type("Constant");
  c->add_output("c");
  auto* value = c->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  auto* ct = value->mutable_t();
  ct->set_data_type(onnx::TensorProto::FLOAT);
  ct->add_dims(1);
  ct->add_dims(1);
  ct->add_float_data(0.5f);
  add_node(g, "Transpose", {"c"}, "c_T");
  add_node(g, "Add", {h, "c_T"}, "y");
  float_type(g->add_output(), "y", {1, kHidden});
  data.close();
  ASSERT_TRUE(data) << "cannot write " << (dir / "model.onnx.data");
  std::ofstream f(dir / "model.onnx", std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&f));
}

bool same_file(const fs::path& a, const fs::path& b) {
  if (fs::file_size(a) != fs::file_size(b)) return false;
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  std::vector<char> ba(size_t{16} << 20), bb(ba.size());
  while (fa && fb) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount() ||
        std::memcmp(ba.data(), bb.data(), static_cast<size_t>(fa.gcount())) != 0)
      return false;
  }
  return true;
}

TEST(HugeModel, WeightsStayMappedThroughFoldFusePlan) {
  const fs::path dir = fs::temp_directory_path() / ("xopt_huge_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "in");
  fs::create_directories(dir / "out");
  build_model(dir / "in");
  if (HasFatalFailure()) return;

  auto model = ir::load_model((dir / "in" / "model.onnx").string());
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_GE(ir::weight_bytes(*model), size_t{kLayers} * kHidden * kHidden * 4);
  for (const ir::Value* v : model->graph->initializers()) {
    if (v->name() != "shape") {
      EXPECT_TRUE(v->initializer()->is_mapped()) << v->name();
    }
  }

  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fold,fuse,plan").is_ok());
  passes::PassContext ctx;
  Status st = pm.run(*model, ctx);
  ASSERT_TRUE(st.is_ok()) << st.message();
  int gemms = 0;
  for (const ir::Node* n : model->graph->nodes()) {
    EXPECT_FALSE(n->is("Reshape") || n->is("Transpose") || n->is("Constant")) << n->describe();
    gemms += n->is("Gemm") || n->op_type() == "FusedGemm";
  }
  EXPECT_EQ(gemms, kLayers) << "MatMul + Add (+ Relu) fuse into Gemm (FusedGemm)";
  ASSERT_TRUE(ctx.plan_outcome().has_value()) << "plan-memory ran";
  // Every weight and bias is the input's bytes, still mapped; the reshaped weight is a view.
  int mapped = 0;
  for (const ir::Value* v : model->graph->initializers()) {
    const ir::Tensor* t = v->initializer();
    if (t->nbytes() < 4 * kHidden) continue;
    EXPECT_TRUE(t->is_mapped()) << v->name();
    ++mapped;
  }
  EXPECT_EQ(mapped, 2 * kLayers);
  const ir::Value* wl = model->graph->find_value("w" + std::to_string(kLayers - 1));
  ASSERT_NE(wl, nullptr);
  ASSERT_TRUE(wl->is_initializer());
  EXPECT_TRUE(wl->initializer()->is_mapped());
  EXPECT_EQ(wl->initializer()->dims(), (std::vector<int64_t>{kHidden, kHidden}));

  st = ir::save_model(*model, (dir / "out" / "model.onnx").string());
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_TRUE(same_file(dir / "in" / "model.onnx.data", dir / "out" / "model.onnx.data"))
      << "the saved data file is the input's, byte for byte";

  auto back = ir::load_model((dir / "out" / "model.onnx").string());
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  for (const ir::Value* v : back->graph->initializers()) {
    if (v->initializer()->nbytes() >= 4 * kHidden) {
      EXPECT_TRUE(v->initializer()->is_mapped()) << v->name();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xopt
