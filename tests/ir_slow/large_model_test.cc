// A model with more than 2 GiB of weights (over protobuf's message limit) loads by mmap and saves
// through external data without its weights ever being copied into anonymous memory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/onnx_io.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

// Anonymous resident memory of this process in bytes (weights copied to the heap would show here;
// mapped file pages do not).
size_t rss_anon_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("RssAnon:", 0) == 0) {
      std::istringstream is(line.substr(8));
      size_t kb = 0;
      is >> kb;
      return kb * 1024;
    }
  return 0;
}

TEST(LargeModel, Over2GiBOfWeightsRoundTripsWithoutCopies) {
  fs::path dir = fs::temp_directory_path() / ("xopt_large_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "in");
  fs::create_directories(dir / "out");
  constexpr int kTensors = 5;
  constexpr int64_t kElems = int64_t{120} << 20;  // 480 MiB of float each, 2.34 GiB in all
  constexpr size_t kBytes = static_cast<size_t>(kElems) * 4;
  {
    // The data file: sparse (holes read as zeros) plus a marker value in each tensor.
    int fd = ::open((dir / "in" / "weights.bin").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kBytes * kTensors)), 0);
    for (int i = 0; i < kTensors; ++i) {
      float marker = static_cast<float>(i + 1);
      ASSERT_EQ(::pwrite(fd, &marker, 4, static_cast<off_t>(kBytes * i + kBytes - 4)), 4);
    }
    ::close(fd);
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("large");
  for (int i = 0; i < kTensors; ++i) {
    auto* t = g->add_initializer();
    t->set_name("w" + std::to_string(i));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(kElems);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", "weights.bin");
    add("offset", std::to_string(kBytes * i));
    add("length", std::to_string(kBytes));
    auto* out = g->add_output();
    out->set_name(t->name());
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  {
    std::ofstream f(dir / "in" / "model.onnx", std::ios::binary);
    ASSERT_TRUE(m.SerializeToOstream(&f));
  }

  const size_t before = rss_anon_bytes();
  auto model = ir::load_model((dir / "in" / "model.onnx").string());
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_GT(ir::weight_bytes(*model), size_t{2} << 30);
  for (const ir::Value* v : model->graph->initializers()) EXPECT_TRUE(v->initializer()->is_mapped());
  EXPECT_LT(rss_anon_bytes() - before, size_t{64} << 20) << "load must not copy weights";

  // kAuto picks external data because the weights pass 2 GiB.
  ASSERT_TRUE(ir::save_model(*model, (dir / "out" / "model.onnx").string()).is_ok());
  EXPECT_LT(rss_anon_bytes() - before, size_t{128} << 20) << "save must stream weights, not copy them";
  EXPECT_GE(fs::file_size(dir / "out" / "model.onnx.data"), kBytes * kTensors);

  auto back = ir::load_model((dir / "out" / "model.onnx").string());
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  for (int i = 0; i < kTensors; ++i) {
    const ir::Tensor* t = back->graph->find_value("w" + std::to_string(i))->initializer();
    ASSERT_EQ(t->numel(), kElems);
    EXPECT_EQ(t->data<float>()[kElems - 1], static_cast<float>(i + 1));
    EXPECT_EQ(t->data<float>()[0], 0.0f);
  }
  ir::SaveOptions inline_only;
  inline_only.external = ir::SaveOptions::External::kNever;
  Status s = ir::save_model(*back, (dir / "out" / "inline.onnx").string(), inline_only);
  EXPECT_FALSE(s.is_ok()) << "over 2 GiB cannot be inline";
  EXPECT_FALSE(fs::exists(dir / "out" / "inline.onnx")) << "no partial output";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xopt
