// External data: save with a size threshold into one data file, load back by mmap, and refuse paths
// that escape the model's folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ir/onnx_io.h"
#include "ir/text.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("xopt_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(ExternalData, SharedModelsRoundTripWith1KiBThreshold) {
  XOPT_REQUIRE_SHARED(shared);
  fs::path dir = temp_dir("ext");
  for (const auto& name : test::shared_model_names()) {
    SCOPED_TRACE(name);
    const std::string src = test::shared_model_path(name);
    auto model = ir::load_model(src);
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    ir::SaveOptions opts;
    opts.external = ir::SaveOptions::External::kAlways;
    opts.external_threshold = 1024;
    const std::string out = (dir / (name + ".onnx")).string();
    ASSERT_TRUE(ir::save_model(*model, out, opts).is_ok());
    ASSERT_TRUE(fs::exists(out + ".data"));
    // The model file itself is small: weights went to the data file.
    EXPECT_LT(fs::file_size(out), fs::file_size(src) / 4);

    auto reloaded = ir::load_model(out);
    ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().message();
    size_t mapped = 0;
    for (const ir::Value* v : reloaded->graph->initializers())
      if (v->initializer()->is_mapped()) ++mapped;
    EXPECT_GT(mapped, 0u) << "weights of at least 1 KiB must load by mmap";

    onnx::ModelProto original = test::read_proto_file(src);
    onnx::ModelProto saved = test::read_proto_file(out);
    test::canonicalize(original, fs::path(src).parent_path().string());
    test::canonicalize(saved, dir.string());
    EXPECT_EQ(test::proto_diff(original, saved), "");
  }
  fs::remove_all(dir);
}

// A model whose single initializer lives at `location` in external data.
std::string write_external_model(const fs::path& dir, const std::string& location) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* t = g->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  auto* out = g->add_output();
  out->set_name("w");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  std::string path = (dir / "model.onnx").string();
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

TEST(ExternalData, RefusesPathsThatEscapeTheModelFolder) {
  fs::path root = temp_dir("escape");
  fs::create_directories(root / "model");
  {
    std::ofstream secret(root / "secret.bin", std::ios::binary);
    secret << std::string(16, 'x');
  }
  fs::create_symlink(root / "secret.bin", root / "model" / "link.bin");
  struct Case {
    std::string location;
    std::string expect;
  };
  for (const Case& c :
       {Case{"../secret.bin", "'..'"}, Case{(root / "secret.bin").string(), "absolute"},
        Case{"link.bin", "outside the model's folder"}}) {
    SCOPED_TRACE(c.location);
    std::string path = write_external_model(root / "model", c.location);
    auto m = ir::load_model(path);
    ASSERT_FALSE(m.is_ok());
    EXPECT_EQ(m.status().code(), ErrorCode::kInvalidModel);
    EXPECT_NE(m.status().message().find(c.expect), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find("model.onnx"), std::string::npos) << "error names the file";
  }
  fs::remove_all(root);
}

TEST(ExternalData, LoadsInFolderDataByMmap) {
  fs::path root = temp_dir("inside");
  {
    std::ofstream d(root / "w.bin", std::ios::binary);
    float vals[4] = {1, 2, 3, 4};
    d.write(reinterpret_cast<const char*>(vals), sizeof vals);
  }
  auto m = ir::load_model(write_external_model(root, "w.bin"));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const ir::Tensor* w = m->graph->find_value("w")->initializer();
  ASSERT_TRUE(w->is_mapped());
  EXPECT_EQ(w->data<float>()[3], 4.0f);
  fs::remove_all(root);
}

TEST(ExternalData, MissingOrShortDataFileIsAnError) {
  fs::path root = temp_dir("short");
  auto m = ir::load_model(write_external_model(root, "absent.bin"));
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("does not exist"), std::string::npos) << m.status().message();
  {
    std::ofstream d(root / "short.bin", std::ios::binary);
    d << "abc";
  }
  auto m2 = ir::load_model(write_external_model(root, "short.bin"));
  ASSERT_FALSE(m2.is_ok());
  EXPECT_NE(m2.status().message().find("past the end"), std::string::npos) << m2.status().message();
  fs::remove_all(root);
}

}  // namespace
}  // namespace xopt
