// Inputs for validation: seeded random tensors that respect dtype and valid ranges (ids below the
// size of what they index), data set folders, and the NAME=VALUE / LO:HI flag syntax.
#include "executor/cpu/model_inputs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/tensor_proto.h"
#include "ir/text.h"

namespace xopt::exec {
namespace {

namespace fs = std::filesystem;

ir::Model parse(const std::string& text) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return std::move(*m);
}

const ir::Value& input(const ir::Model& m, const std::string& name) {
  const ir::Value* v = m.graph->find_value(name);
  EXPECT_NE(v, nullptr) << name;
  return *v;
}

std::string zeros(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += i ? ", 0" : "0";
  return s;
}

// ids -> Gather of a [100,4] table (through an Identity alias); pos -> Unsqueeze/Squeeze/Cast ->
// Gather of [7,4]; direct -> Gathers of both tables; cols -> GatherElements along axis 1 of [2,3].
std::string ids_model() {
  return R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (int64[2,5] ids, int32[2,5] pos, int64[3] direct, int64[2,3] cols, float[N,3] x, bool[4] m)
    => (float[2,5,4] e, float[2,5,4] p, float[3,4] d, float[3,4] d2, float[2,3] c)
     <float[100,4] table = {)" +
         zeros(400) + R"(}, float[7,4] ptable = {)" + zeros(28) + R"(}, float[2,3] ctable = {)" +
         zeros(6) + R"(}> {
    axes = Constant<value = int64[1] {0}>()
    alias = Identity(table)
    e = Gather(alias, ids)
    u = Unsqueeze(pos, axes)
    sq = Squeeze(u, axes)
    c64 = Cast<to = 7>(sq)
    p = Gather(ptable, c64)
    d = Gather<axis = 0>(table, direct)
    d2 = Gather<axis = 0>(ptable, direct)
    c = GatherElements<axis = 1>(ctable, cols)
  })";
}

TEST(InputRanges, IdsIndexingAGatherStayBelowItsDim) {
  ir::Model m = parse(ids_model());
  auto r = input_value_range(*m.graph, input(m, "ids"), {});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->lo, 0.0);
  EXPECT_EQ(r->hi, 99.0) << "through the Identity of the table: " << r->origin;
  EXPECT_NE(r->origin.find("100"), std::string::npos) << r->origin;
  r = input_value_range(*m.graph, input(m, "pos"), {});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->hi, 6.0) << "through Unsqueeze, Squeeze and Cast: " << r->origin;
  r = input_value_range(*m.graph, input(m, "direct"), {});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->hi, 6.0) << "the smaller of two gathered tables (100 and 7): " << r->origin;
  r = input_value_range(*m.graph, input(m, "cols"), {});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->hi, 2.0) << "GatherElements along axis 1 of [2,3]: " << r->origin;
}

TEST(InputRanges, DefaultsAndGivenRanges) {
  ir::Model m = parse(ids_model());
  auto f = input_value_range(*m.graph, input(m, "x"), {});
  ASSERT_TRUE(f.is_ok());
  EXPECT_EQ(f->lo, -1.0);
  EXPECT_EQ(f->hi, 1.0);
  EXPECT_EQ(f->origin, "default");
  auto b = input_value_range(*m.graph, input(m, "m"), {});
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->hi, 1.0);
  RandomInputOptions o;
  o.ranges["ids"] = {10, 12};
  auto g = input_value_range(*m.graph, input(m, "ids"), o);
  ASSERT_TRUE(g.is_ok());
  EXPECT_EQ(g->lo, 10.0);
  EXPECT_EQ(g->hi, 12.0);
  EXPECT_EQ(g->origin, "given");
}

TEST(RandomInputs, RespectDtypeShapeAndRange) {
  ir::Model m = parse(ids_model());
  RandomInputOptions o;
  o.seed = 3;
  o.ranges["x"] = {5.0, 6.0};
  o.shapes.batch = 4;
  std::vector<std::string> notes;
  auto in = random_inputs(*m.graph, o, &notes);
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  ASSERT_EQ(in->size(), 6u);
  EXPECT_EQ(notes.size(), 6u);
  const ir::Tensor& ids = in->at("ids");
  EXPECT_EQ(ids.dtype(), ir::DType::kInt64);
  EXPECT_EQ(ids.dims(), (std::vector<int64_t>{2, 5}));
  for (int64_t i = 0; i < ids.numel(); ++i) {
    EXPECT_GE(ids.as_int64(i), 0);
    EXPECT_LE(ids.as_int64(i), 99);
  }
  const ir::Tensor& pos = in->at("pos");
  EXPECT_EQ(pos.dtype(), ir::DType::kInt32);
  for (int64_t i = 0; i < pos.numel(); ++i) EXPECT_LE(pos.as_int64(i), 6);
  const ir::Tensor& x = in->at("x");
  EXPECT_EQ(x.dims(), (std::vector<int64_t>{4, 3})) << "symbolic N bound by batch";
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_GE(x.data<float>()[i], 5.0f);
    EXPECT_LT(x.data<float>()[i], 6.0f);
  }
  EXPECT_EQ(in->at("m").dtype(), ir::DType::kBool);
  // Notes say where each range came from.
  bool saw_ids = false;
  for (const auto& n : notes)
    if (n.rfind("ids: int64[2,5] random 0..99", 0) == 0) saw_ids = true;
  EXPECT_TRUE(saw_ids) << ::testing::PrintToString(notes);
}

TEST(RandomInputs, DeterministicForASeedAndDifferentAcrossSeeds) {
  ir::Model m = parse(ids_model());
  RandomInputOptions o;
  o.seed = 11;
  auto a = random_inputs(*m.graph, o);
  auto b = random_inputs(*m.graph, o);
  o.seed = 12;
  auto c = random_inputs(*m.graph, o);
  ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok());
  for (const auto& [name, t] : *a) EXPECT_TRUE(t.same_contents(b->at(name))) << name;
  EXPECT_FALSE(a->at("x").same_contents(c->at("x")));
  EXPECT_FALSE(a->at("ids").same_contents(c->at("ids")));
  // Both ends of an integer range occur.
  o.ranges["ids"] = {0, 1};
  auto d = random_inputs(*m.graph, o);
  ASSERT_TRUE(d.is_ok());
  int ones = 0;
  for (int64_t i = 0; i < 10; ++i) ones += d->at("ids").as_int64(i) == 1;
  EXPECT_GT(ones, 0);
  EXPECT_LT(ones, 10);
}

TEST(RandomInputs, ShapesSkipsAndErrors) {
  ir::Model m = parse(ids_model());
  RandomInputOptions o;
  o.shapes.input_shapes["x"] = {2, 3};
  o.skip = {"ids"};
  auto in = random_inputs(*m.graph, o);
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  EXPECT_EQ(in->count("ids"), 0u);
  EXPECT_EQ(in->at("x").dims(), (std::vector<int64_t>{2, 3}));

  o.shapes.input_shapes["x"] = {2, 4};
  auto bad = random_inputs(*m.graph, o);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'x'"), std::string::npos) << bad.status().message();

  RandomInputOptions r;
  r.ranges["nope"] = {0, 1};
  auto none = random_inputs(*m.graph, r);
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().message().find("'nope' is not an input"), std::string::npos);

  RandomInputOptions br;
  br.ranges["m"] = {0, 2};
  auto boolean = random_inputs(*m.graph, br);
  ASSERT_FALSE(boolean.is_ok());
  EXPECT_NE(boolean.status().message().find("bool"), std::string::npos);

  RandomInputOptions wide;
  wide.ranges["pos"] = {0, 1e12};
  auto w = random_inputs(*m.graph, wide);
  ASSERT_FALSE(w.is_ok());
  EXPECT_NE(w.status().message().find("does not fit int32"), std::string::npos)
      << w.status().message();

  ir::Model s = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (string[2] s) => (string[2] t) { t = Identity(s) })");
  auto str = random_inputs(*s.graph, {});
  ASSERT_FALSE(str.is_ok());
  EXPECT_EQ(str.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(str.status().message().find("'s' is string"), std::string::npos);
}

TEST(RandomInputs, HalfPrecisionInputs) {
  ir::Model m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[64] h, bfloat16[64] b) => (float16[64] y, bfloat16[64] z) {
      y = Identity(h)
      z = Identity(b)
    })");
  auto in = random_inputs(*m.graph, {});
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  double lo = 1, hi = -1;
  for (const char* n : {"h", "b"})
    for (int64_t i = 0; i < 64; ++i) {
      lo = std::min(lo, in->at(n).as_double(i));
      hi = std::max(hi, in->at(n).as_double(i));
    }
  EXPECT_GE(lo, -1.0);
  EXPECT_LE(hi, 1.0);
  EXPECT_LT(lo, -0.5);
  EXPECT_GT(hi, 0.5);
}

class DataSetDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("xopt_validate_ds_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "test_data_set_1");
    fs::create_directories(dir_ / "test_data_set_0");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& f, const ir::Tensor& t, const std::string& name) {
    onnx::TensorProto p = ir::tensor_to_proto(t);
    p.set_name(name);
    std::ofstream out(f, std::ios::binary);
    ASSERT_TRUE(p.SerializeToOstream(&out));
  }
  fs::path dir_;
};

TEST_F(DataSetDir, FoldersInputsByNameOrPositionAndOutputs) {
  ir::Model m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] a, float[2] b) => (float[2] y) { y = Add(a, b) })");
  // Set 0: named in reverse order; set 1: unnamed, by position.
  write(dir_ / "test_data_set_0" / "input_0.pb", ir::Tensor::of<float>({2}, {1, 2}), "b");
  write(dir_ / "test_data_set_0" / "input_1.pb", ir::Tensor::of<float>({2}, {3, 4}), "a");
  write(dir_ / "test_data_set_0" / "output_0.pb", ir::Tensor::of<float>({2}, {4, 6}), "y");
  write(dir_ / "test_data_set_1" / "input_0.pb", ir::Tensor::of<float>({2}, {5, 6}), "");
  write(dir_ / "test_data_set_1" / "input_1.pb", ir::Tensor::of<float>({2}, {7, 8}), "");
  auto sets = find_data_sets(dir_.string());
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(fs::path(sets[0]).filename(), "test_data_set_0");
  EXPECT_EQ(find_data_sets(sets[1]), std::vector<std::string>{sets[1]}) << "a set itself";
  auto d0 = read_data_set(*m.graph, sets[0]);
  ASSERT_TRUE(d0.is_ok()) << d0.status().message();
  EXPECT_EQ(d0->inputs.at("a").data<float>()[0], 3.0f);
  EXPECT_EQ(d0->inputs.at("b").data<float>()[0], 1.0f);
  ASSERT_EQ(d0->outputs.size(), 1u);
  auto d1 = read_data_set(*m.graph, sets[1]);
  ASSERT_TRUE(d1.is_ok()) << d1.status().message();
  EXPECT_EQ(d1->inputs.at("a").data<float>()[0], 5.0f);
  EXPECT_EQ(d1->inputs.at("b").data<float>()[0], 7.0f);
  EXPECT_TRUE(d1->outputs.empty());

  // A file more than the graph has inputs; a folder with nothing in it.
  write(dir_ / "test_data_set_1" / "input_2.pb", ir::Tensor::of<float>({2}, {0, 0}), "");
  auto extra = read_data_set(*m.graph, sets[1]);
  ASSERT_FALSE(extra.is_ok());
  EXPECT_NE(extra.status().message().find("input_2.pb"), std::string::npos);
  fs::create_directories(dir_ / "empty");
  EXPECT_TRUE(find_data_sets((dir_ / "empty").string()).empty());
  auto empty = read_data_set(*m.graph, (dir_ / "empty").string());
  EXPECT_FALSE(empty.is_ok());
  std::ofstream(dir_ / "junk.pb") << "not a proto at all \x01\x02";
  auto junk = read_tensor_proto_file((dir_ / "junk.pb").string());
  EXPECT_FALSE(junk.is_ok());
}

TEST(FlagSyntax, AssignmentsAndRanges) {
  auto kv = split_assignment("input_ids=a=b.pb");
  ASSERT_TRUE(kv.is_ok());
  EXPECT_EQ(kv->first, "input_ids");
  EXPECT_EQ(kv->second, "a=b.pb");
  EXPECT_FALSE(split_assignment("noequals").is_ok());
  EXPECT_FALSE(split_assignment("=x").is_ok());
  EXPECT_FALSE(split_assignment("x=").is_ok());
  auto r = parse_range("-5:1e3");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->first, -5.0);
  EXPECT_EQ(r->second, 1000.0);
  EXPECT_FALSE(parse_range("3:1").is_ok());
  EXPECT_FALSE(parse_range("1").is_ok());
  EXPECT_FALSE(parse_range("a:2").is_ok());
  EXPECT_FALSE(parse_range("0:inf").is_ok());
}

}  // namespace
}  // namespace xopt::exec
