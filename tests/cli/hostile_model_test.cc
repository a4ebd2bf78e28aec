// Hostile models (issue 15): each is a clear error (exit 2 for a bad model) or correct work, never
// a crash, a hang or a huge allocation. The 10^6-node graph is a benchmark
// (bench/large_graph_bench.cc), not a timed test (tests/cli_slow runs 2*10^5 nodes, label slow);
// overflowing dims are tests/ir/load_errors_test.cc's; the fuzzers (fuzz/) throw everything else
// at the same code.
#include <sys/resource.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

// Largest resident set (bytes) any finished child of this test process reached: ctest runs each
// test in a process of its own, so this is the largest xopt run of this test.
size_t children_peak_rss() {
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  return static_cast<size_t>(ru.ru_maxrss) * 1024;
}

void expect_bad_model(const test::CommandResult& r, const std::string& model,
                      const std::string& says) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(model), std::string::npos) << "names the file: " << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
}

// 10^9 floats (4 GB) from a few bytes of constants: folding must leave them computed, not allocate.
TEST(Hostile, GiganticConstantsAreNotFolded) {
  struct Case {
    const char* op;
    const char* text;
  };
  const Case cases[] = {
      {"ConstantOfShape", R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[1] x) => (float[1000,1000,1000] y) <int64[3] s = {1000, 1000, 1000}> {
          c = ConstantOfShape <value = float[1] {1}> (s)
          y = Add(c, x)
        })"},
      {"Expand", R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[1] x) => (float[1000,1000,1000] y)
           <int64[3] s = {1000, 1000, 1000}, float[1] one = {1}> {
          c = Expand(one, s)
          y = Add(c, x)
        })"},
      {"Tile", R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[1] x) => (float[1000,1000000] y)
           <int64[2] r = {1000, 100000}, float[1,10] ten = {1,2,3,4,5,6,7,8,9,10}> {
          c = Tile(ten, r)
          y = Add(c, x)
        })"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    test::TempDir dir;
    test::write_proto(dir / "huge.onnx", test::parse_text_proto(c.text));
    auto r = test::run_xopt(
        {"--passes=cleanup,fold,fuse,plan", dir / "huge.onnx", "-o", dir / "out.onnx"});
    EXPECT_EQ(r.code, 0) << r.err;
    onnx::ModelProto out;
    ASSERT_TRUE(out.ParseFromString(test::read_file(dir / "out.onnx")));
    bool kept = false;
    for (const auto& n : out.graph().node()) kept = kept || n.op_type() == c.op;
    EXPECT_TRUE(kept) << c.op << " stays computed";
    EXPECT_LT(test::read_file(dir / "out.onnx").size(), size_t{1} << 20);
  }
  EXPECT_LT(children_peak_rss(), size_t{1} << 30) << "no run came near the 4 GB";
}

// `depth` Ifs, each in the then-branch of the next.
onnx::GraphProto nested_if(int depth) {
  onnx::GraphProto g = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) { y = Relu(x) })")
                           .graph();
  g.clear_input();
  const onnx::GraphProto leaf = g;
  for (int i = 0; i < depth; ++i) {
    onnx::GraphProto outer;
    outer.set_name("level" + std::to_string(i));
    auto* n = outer.add_node();
    n->set_op_type("If");
    n->set_name("if" + std::to_string(i));
    n->add_input("c");
    n->add_output("y");
    *outer.add_output() = g.output(0);
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = *branch == 't' ? std::move(g) : leaf;
    }
    g = std::move(outer);
  }
  return g;
}

onnx::ModelProto model_of(onnx::GraphProto g) {
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) { y = Relu(x) })");
  auto inputs = m.graph().input();
  *m.mutable_graph() = std::move(g);
  *m.mutable_graph()->mutable_input() = inputs;
  return m;
}

// Loading, verifying and saving recurse into subgraphs: a deep nest is refused when the protobuf
// parser's nesting limit is reached (no stack overflow anywhere after it), and a nest within it is
// optimized and saved whole.
TEST(Hostile, DeeplyNestedSubgraphs) {
  test::TempDir dir;
  test::write_proto(dir / "deep.onnx", model_of(nested_if(1000)));
  auto r = test::run_xopt(
      {"--passes=cleanup,fold,fuse,plan", dir / "deep.onnx", "-o", dir / "deep.out.onnx"});
  expect_bad_model(r, dir / "deep.onnx", "not a valid ONNX model");
  EXPECT_FALSE(fs::exists(dir / "deep.out.onnx"));

  test::write_proto(dir / "nested.onnx", model_of(nested_if(20)));
  r = test::run_xopt({"--passes=cleanup", dir / "nested.onnx", "-o", dir / "nested.out.onnx"});
  EXPECT_EQ(r.code, 0) << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(test::read_file(dir / "nested.out.onnx")));
  int depth = 0;
  for (const onnx::GraphProto* g = &out.graph();
       g->node_size() == 1 && g->node(0).op_type() == "If"; g = &g->node(0).attribute(0).g())
    ++depth;
  EXPECT_EQ(depth, 20);
}

TEST(Hostile, MismatchedDtypes) {
  test::TempDir dir;
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) <int64[4] w = {1, 2, 3, 4}> {
      y = Add(x, w)
    })");
  m.mutable_graph()->mutable_node(0)->set_name("the_add");
  test::write_proto(dir / "dtypes.onnx", m);
  auto r = test::run_xopt(
      {"--passes=cleanup,fold,fuse,plan", dir / "dtypes.onnx", "-o", dir / "out.onnx"});
  expect_bad_model(r, dir / "dtypes.onnx", "the_add");
  EXPECT_FALSE(fs::exists(dir / "out.onnx"));
}

// Names that are not UTF-8 (the model fuzzer's find: the plan's JSON could not be written and the
// exception ended the process) are refused at load, naming the bytes; so is every later stage.
TEST(Hostile, NamesThatAreNotUtf8) {
  test::TempDir dir;
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      t = Relu(x)
      y = Relu(t)
    })");
  m.mutable_graph()->mutable_node(0)->set_name("relu\xff");
  test::write_proto(dir / "names.onnx", m);
  auto r = test::run_xopt({"--passes=fold,fuse,plan", dir / "names.onnx", "-o", dir / "out.onnx"});
  expect_bad_model(r, dir / "names.onnx", "node name 'relu\\xff' is not valid UTF-8");
  EXPECT_FALSE(fs::exists(dir / "out.onnx"));
  // A value name: an overlong encoding of '/' (0xC0 0xAF) is not UTF-8 either.
  m.mutable_graph()->mutable_node(0)->set_name("relu");
  m.mutable_graph()->mutable_node(0)->set_output(0, "t\xc0\xaf");
  m.mutable_graph()->mutable_node(1)->set_input(0, "t\xc0\xaf");
  test::write_proto(dir / "names.onnx", m);
  r = test::run_xopt({"--passes=fold,fuse,plan", dir / "names.onnx", "-o", dir / "out.onnx"});
  expect_bad_model(r, dir / "names.onnx", "value 't\\xc0\\xaf' is not valid UTF-8");
  // Valid multi-byte names are fine.
  m.mutable_graph()->mutable_node(0)->set_output(0, "t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  m.mutable_graph()->mutable_node(1)->set_input(0, "t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  test::write_proto(dir / "names.onnx", m);
  r = test::run_xopt({"--passes=fold,fuse,plan", dir / "names.onnx", "-o", dir / "out.onnx"});
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Hostile, DuplicateNames) {
  struct Case {
    const char* name;
    const char* text;
    const char* says;  // empty: a valid model, optimized
  };
  const Case cases[] = {
      {"initializer twice", R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y) <float[2] w = {1, 2}, float[2] w = {3, 4}> {
          y = Add(x, w)
        })",
       "defined twice"},
      {"input twice", R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x, float[2] x) => (float[2] y) {
          y = Relu(x)
        })",
       "listed twice"},
      {"node writes an input", R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] x2) {
          x = Relu(x)
          x2 = Neg(x)
        })",
       "already a graph input"},
      {"two nodes, one name", R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y) {
          a = Relu(x)
          b = Neg(x)
          y = Add(a, b)
        })",
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    test::TempDir dir;
    onnx::ModelProto m = test::parse_text_proto(c.text);
    for (auto& n : *m.mutable_graph()->mutable_node()) n.set_name("same");
    test::write_proto(dir / "dup.onnx", m);
    auto r = test::run_xopt(
        {"--passes=cleanup,fold,fuse,plan", dir / "dup.onnx", "-o", dir / "out.onnx"});
    if (*c.says != '\0') {
      expect_bad_model(r, dir / "dup.onnx", c.says);
      EXPECT_FALSE(fs::exists(dir / "out.onnx"));
    } else {
      EXPECT_EQ(r.code, 0) << r.err;
      auto v = test::run_xopt({"validate", dir / "dup.onnx", dir / "out.onnx"});
      EXPECT_EQ(v.code, 0) << v.out << v.err;
    }
  }
}

// A model whose one initializer is external, at `location` relative to the model's folder.
onnx::ModelProto external_model(const std::string& location, int64_t offset) {
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) <float[4] w = {0, 0, 0, 0}> {
      y = Mul(x, w)
    })");
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  return m;
}

TEST(Hostile, ExternalDataPastTheFileEnd) {
  test::TempDir dir;
  test::write_file(dir / "w.bin", std::string(16, '\0'));
  for (int64_t offset : {int64_t{8}, int64_t{1} << 40, INT64_MAX - 4}) {
    SCOPED_TRACE(offset);
    test::write_proto(dir / "past.onnx", external_model("w.bin", offset));
    auto r = test::run_xopt({"--passes=cleanup", dir / "past.onnx", "-o", dir / "out.onnx"});
    expect_bad_model(r, dir / "past.onnx", "past the end");
    EXPECT_FALSE(fs::exists(dir / "out.onnx"));
  }
}

TEST(Hostile, ExternalDataThroughASymlink) {
  test::TempDir dir;
  fs::create_directories(dir.path() / "model");
  test::write_file(dir / "secret.bin", std::string(16, '\x01'));
  fs::create_symlink(dir.path() / "secret.bin", dir.path() / "model" / "w.bin");
  const std::string model = (dir.path() / "model" / "link.onnx").string();
  test::write_proto(model, external_model("w.bin", 0));
  auto r = test::run_xopt({"--passes=cleanup", model});
  expect_bad_model(r, model, "outside the model's folder");
  EXPECT_FALSE(fs::exists(dir.path() / "model" / "link.opt.onnx"));
}

// A plan stored in a model can lie; plan-info and the CPU executor (xopt validate runs the model in
// its plan) refuse each lie, naming it, as a bad model.
TEST(Hostile, LyingPlans) {
  test::TempDir dir;
  test::write_proto(dir / "m.onnx", test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[64] x) => (float[64] y) {
      a = Relu(x)
      b = Neg(x)
      c = Add(a, b)
      y = Sigmoid(c)
    })"));
  auto r = test::run_xopt(
      {"--passes=cleanup,plan", "--io-in-arena", dir / "m.onnx", "-o", dir / "planned.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  onnx::ModelProto planned;
  ASSERT_TRUE(planned.ParseFromString(test::read_file(dir / "planned.onnx")));
  onnx::StringStringEntryProto* entry = nullptr;
  for (auto& p : *planned.mutable_metadata_props())
    if (p.key() == "xopt.memory_plan") entry = &p;
  ASSERT_NE(entry, nullptr);
  const nlohmann::json plan = nlohmann::json::parse(entry->value());
  auto value = [](nlohmann::json& j, const std::string& name) -> nlohmann::json& {
    for (auto& v : j["values"])
      if (v["name"] == name) return v;
    throw std::runtime_error("no value " + name);
  };
  struct Lie {
    const char* name;
    std::function<void(nlohmann::json&)> tell;
    const char* says;
  };
  const Lie lies[] = {
      {"overlapping offsets",
       [&](nlohmann::json& j) { value(j, "b")["offset"] = value(j, "a")["offset"]; },
       "share bytes"},
      {"size too small", [&](nlohmann::json& j) { value(j, "a")["size"] = 4; }, "needs 256 bytes"},
      {"step out of range", [&](nlohmann::json& j) { value(j, "c")["last"] = 1000; }, "steps"},
      {"step before the first", [&](nlohmann::json& j) { value(j, "a")["first"] = -7; }, "steps"},
      {"offset wraps around",
       [&](nlohmann::json& j) { value(j, "a")["offset"] = ~uint64_t{0} - 16; },
       "outside the arena"},
      {"huge arena", [&](nlohmann::json& j) { j["arena_bytes"] = uint64_t{1} << 50; }, "arena of"},
  };
  for (const Lie& lie : lies) {
    SCOPED_TRACE(lie.name);
    nlohmann::json j = plan;
    lie.tell(j);
    entry->set_value(j.dump());
    test::write_proto(dir / "lie.onnx", planned);
    auto info = test::run_xopt({"plan-info", dir / "lie.onnx"});
    expect_bad_model(info, dir / "lie.onnx", lie.says);
    auto run = test::run_xopt({"validate", dir / "m.onnx", dir / "lie.onnx"});
    EXPECT_EQ(run.code, 2) << run.out << run.err;
    EXPECT_NE(run.err.find("memory plan"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(lie.says), std::string::npos) << run.err;
  }
  EXPECT_LT(children_peak_rss(), size_t{1} << 30) << "the huge arena was never allocated";
}

}  // namespace
}  // namespace xopt
