// The provenance the pipeline saves in its output (metadata "xopt.provenance") makes a diff
// between the two files exact: `xviz diff bert_mini.onnx bert_mini.opt.onnx` marks every node as
// the in-memory diff right after the passes does, instead of inferring it from names and value
// flow.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ir/onnx_io.h"
#include "ir/provenance.h"
#include "pipeline/pipeline.h"
#include "tests/util/test_util.h"
#include "viz/diff.h"
#include "viz/output.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

void expect_same(const std::vector<viz::NodeDiff>& a, const std::vector<viz::NodeDiff>& b,
                 const char* side) {
  ASSERT_EQ(a.size(), b.size()) << side;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name) << side;
    EXPECT_EQ(a[i].op, b[i].op) << side << " " << a[i].name;
    EXPECT_EQ(a[i].change, b[i].change) << side << " " << a[i].name;
    EXPECT_EQ(a[i].counterparts, b[i].counterparts) << side << " " << a[i].name;
    EXPECT_EQ(a[i].part_of, b[i].part_of) << side << " " << a[i].name;
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ProvenanceDiff, BertMiniFilesMatchLikeTheInMemoryDiff) {
  const std::string path = test::shared_model_path("bert_mini");
  if (path.empty()) return;
  const fs::path dir = fs::temp_directory_path() / "xopt_provenance_diff_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  pipeline::Options o;
  o.model = path;
  o.output = (dir / "bert_mini.opt.onnx").string();
  o.passes = "fold,fuse";
  auto out = pipeline::optimize(o);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_FALSE(out->provenance.empty());

  auto before = viz::load_for_drawing(path);
  auto saved = viz::load_for_drawing(o.output);
  ASSERT_TRUE(before.is_ok() && saved.is_ok());
  const viz::GraphDiff in_memory = viz::diff_graphs(*before->graph, *out->model.graph);
  const viz::GraphDiff between_files = viz::diff_graphs(*before->graph, *saved->graph);
  EXPECT_FALSE(in_memory.inferred);
  EXPECT_FALSE(between_files.inferred);
  expect_same(in_memory.before, between_files.before, "before");
  expect_same(in_memory.after, between_files.after, "after");
  int fused = 0;
  for (const viz::NodeDiff& n : in_memory.after) fused += n.change == viz::Change::kFused;
  EXPECT_GT(fused, 0);
  int originals = 0;
  for (const viz::NodeDiff& n : in_memory.before) originals += n.change == viz::Change::kFused;

  // The command line reads the record too: its summary says "matched by provenance", with the
  // in-memory diff's counts.
  const std::string dot = (dir / "diff.dot").string();
  const std::string cmd =
      std::string(XVIZ_BIN) + " -q diff " + path + " " + o.output + " -o " + dot;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string text = read_file(dot);
  const std::string counts =
      std::to_string(originals) + " fused into " + std::to_string(fused) + ",";
  EXPECT_NE(text.find(counts), std::string::npos) << counts;
  EXPECT_NE(text.find("(matched by provenance)"), std::string::npos);
  fs::remove_all(dir);
}

// A saved record that is not what this xopt writes is an error naming the key, not a guess.
TEST(ProvenanceDiff, AMalformedRecordIsAnError) {
  EXPECT_TRUE(ir::provenance_from_json(R"({"version": 1, "nodes": {"a": ["x", "y"]}})").is_ok());
  for (const char* bad : {"[]", R"({"version": 2, "nodes": {}})", R"({"version": 1})",
                          R"({"version": 1, "nodes": {"a": "x"}})",
                          R"({"version": 1, "nodes": {"a": [1]}})", "not json"}) {
    auto r = ir::provenance_from_json(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("xopt.provenance"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace xopt
