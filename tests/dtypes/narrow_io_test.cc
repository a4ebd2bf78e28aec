// The narrow types across the ONNX boundary: sub-byte tensors are packed in TensorProto (raw_data,
// int32_data, external data) and one byte per element in memory. Loading and saving a model with
// such initializers gives back every initializer byte for byte, in the encoding it came in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "ir/onnx_io.h"
#include "ir/tensor_proto.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;
using ir::DType;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("xopt_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void add_raw(onnx::GraphProto* g, const std::string& name, DType t, std::vector<int64_t> dims,
             std::string bytes) {
  auto* tp = g->add_initializer();
  tp->set_name(name);
  tp->set_data_type(static_cast<int>(t));
  for (int64_t d : dims) tp->add_dims(d);
  tp->set_raw_data(std::move(bytes));
}

void add_typed(onnx::GraphProto* g, const std::string& name, DType t, std::vector<int64_t> dims,
               std::vector<int32_t> values) {
  auto* tp = g->add_initializer();
  tp->set_name(name);
  tp->set_data_type(static_cast<int>(t));
  for (int64_t d : dims) tp->add_dims(d);
  for (int32_t v : values) tp->add_int32_data(v);
}

// int4 [-8, -1, 0, 1, 7, 3, -5] packed low nibble first: 0xf8, 0x10, 0x37, 0x0b (padding 0).
const std::string kInt4Packed("\xf8\x10\x37\x0b", 4);

onnx::ModelProto narrow_model() {
  onnx::ModelProto m;
  m.set_ir_version(11);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(25);
  auto* g = m.mutable_graph();
  g->set_name("narrow");
  auto* n = g->add_node();
  n->set_op_type("Cast");
  n->add_input("w4");
  n->add_output("y");
  auto* to = n->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(1);
  add_raw(g, "w4", DType::kInt4, {7}, kInt4Packed);
  add_typed(g, "u4", DType::kUInt4, {3, 3}, {0x21, 0x43, 0x65, 0x87, 0x0f});
  add_raw(g, "u2", DType::kUInt2, {5}, std::string("\xe4\x03", 2));
  add_typed(g, "i2", DType::kInt2, {2, 3}, {0xb1, 0x0e});
  add_raw(g, "f4", DType::kFloat4E2M1, {3}, std::string("\x9a\x07", 2));
  add_raw(g, "f8", DType::kFloat8E4M3FN, {4}, std::string("\x00\x7e\xfe\x7f", 4));
  add_typed(g, "e5", DType::kFloat8E5M2, {3}, {0x3c, 0x7c, 0xfe});
  add_raw(g, "e8", DType::kFloat8E8M0, {2}, std::string("\x7f\xff", 2));
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(7);
  return m;
}

std::string write_model(const fs::path& path, const onnx::ModelProto& m) {
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path.string();
}

TEST(NarrowIo, UnpacksToOneBytePerElement) {
  fs::path dir = temp_dir("narrow_unpack");
  auto model = ir::load_model(write_model(dir / "m.onnx", narrow_model()));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto get = [&](const std::string& name) { return model->graph->find_value(name)->initializer(); };
  const ir::Tensor* w4 = get("w4");
  EXPECT_EQ(w4->dtype(), DType::kInt4);
  EXPECT_EQ(w4->nbytes(), 7u);
  const std::vector<int64_t> want4 = {-8, -1, 0, 1, 7, 3, -5};
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(w4->as_int64(i), want4[static_cast<size_t>(i)]);
  const ir::Tensor* u4 = get("u4");
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(u4->as_int64(i), i < 8 ? i + 1 : 15);
  const ir::Tensor* u2 = get("u2");  // 0xe4 = 11 10 01 00, then 0x03
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(u2->as_int64(i), i < 4 ? i : 3);
  const ir::Tensor* i2 = get("i2");  // 0xb1 = 10 11 00 01 -> 1, 0, -1, -2; 0x0e -> -2, -1
  const std::vector<int64_t> want2 = {1, 0, -1, -2, -2, -1};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(i2->as_int64(i), want2[static_cast<size_t>(i)]);
  const ir::Tensor* f4 = get("f4");  // 0xa (-1), 0x9 (-0.5), 0x7 (6)
  EXPECT_EQ(f4->as_double(0), -1.0);
  EXPECT_EQ(f4->as_double(1), -0.5);
  EXPECT_EQ(f4->as_double(2), 6.0);
  EXPECT_EQ(get("f8")->as_double(1), 448.0);
  EXPECT_EQ(get("e5")->as_double(0), 1.0);
  EXPECT_EQ(get("e8")->as_double(0), 1.0);
  fs::remove_all(dir);
}

// Every initializer comes back byte-identical (serialized TensorProto), raw or typed as it came.
TEST(NarrowIo, SaveIsByteIdentical) {
  fs::path dir = temp_dir("narrow_round_trip");
  const onnx::ModelProto original = narrow_model();
  auto model = ir::load_model(write_model(dir / "in.onnx", original));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::string out = (dir / "out.onnx").string();
  ASSERT_TRUE(ir::save_model(*model, out).is_ok());
  const onnx::ModelProto saved = test::read_proto_file(out);
  ASSERT_EQ(saved.graph().initializer_size(), original.graph().initializer_size());
  for (int i = 0; i < original.graph().initializer_size(); ++i) {
    SCOPED_TRACE(original.graph().initializer(i).name());
    EXPECT_EQ(saved.graph().initializer(i).SerializeAsString(),
              original.graph().initializer(i).SerializeAsString());
  }
  EXPECT_EQ(test::proto_diff(original, saved), "");
  // And through model_to_proto (the non-streaming path).
  EXPECT_EQ(test::proto_diff(original, ir::model_to_proto(*model)), "");
  fs::remove_all(dir);
}

// External data holds the packed bytes; they load back unpacked.
TEST(NarrowIo, ExternalDataIsPacked) {
  fs::path dir = temp_dir("narrow_external");
  const onnx::ModelProto original = narrow_model();
  auto model = ir::load_model(write_model(dir / "in.onnx", original));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  ir::SaveOptions opts;
  opts.external = ir::SaveOptions::External::kAlways;
  opts.external_threshold = 0;
  const std::string out = (dir / "out.onnx").string();
  ASSERT_TRUE(ir::save_model(*model, out, opts).is_ok());
  const onnx::ModelProto saved = test::read_proto_file(out);
  const onnx::TensorProto& w4 = saved.graph().initializer(0);
  ASSERT_EQ(w4.data_location(), onnx::TensorProto::EXTERNAL);
  int64_t offset = -1, length = -1;
  for (const auto& kv : w4.external_data()) {
    if (kv.key() == "offset") offset = std::stoll(kv.value());
    if (kv.key() == "length") length = std::stoll(kv.value());
  }
  EXPECT_EQ(length, 4);  // 7 int4 elements packed
  std::ifstream data(out + ".data", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(data)), std::istreambuf_iterator<char>());
  ASSERT_GE(offset, 0);
  EXPECT_EQ(bytes.substr(static_cast<size_t>(offset), 4), kInt4Packed);

  auto reloaded = ir::load_model(out);
  ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().message();
  for (const ir::Value* v : model->graph->initializers()) {
    SCOPED_TRACE(v->name());
    EXPECT_TRUE(
        v->initializer()->same_contents(*reloaded->graph->find_value(v->name())->initializer()));
  }
  fs::remove_all(dir);
}

TEST(NarrowIo, RefusesAWrongPackedSize) {
  onnx::TensorProto tp;
  tp.set_name("t");
  tp.set_data_type(static_cast<int>(DType::kInt4));
  tp.add_dims(5);
  tp.set_raw_data(std::string(5, '\0'));  // 5 bytes for 5 int4 elements: should be 3
  auto t = ir::tensor_from_proto(tp, "");
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("expected 3"), std::string::npos) << t.status().message();
  tp.clear_raw_data();
  tp.add_int32_data(1);
  EXPECT_FALSE(ir::tensor_from_proto(tp, "").is_ok());
  EXPECT_EQ(ir::packed_nbytes(DType::kInt2, 5), 2u);
  EXPECT_EQ(ir::packed_nbytes(DType::kFloat8E5M2, 5), 5u);
}

}  // namespace
}  // namespace xopt
