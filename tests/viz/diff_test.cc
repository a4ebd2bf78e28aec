// xviz diff on resnet18 before / after fold,fuse: every BatchNormalization is marked as fused into
// the Conv that fed it, in memory (provenance) and between two files (inferred).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/onnx_io.h"
#include "tests/util/test_util.h"
#include "tests/viz/viz_test_util.h"
#include "viz/diff.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;
using test::Xml;

// Each BatchNormalization of `before` went into the node of B named after the Conv that fed it.
void expect_bn_fused_into_conv(const ir::Graph& before, const viz::GraphDiff& d) {
  int bns = 0;
  for (const ir::Node* n : before.nodes()) {
    if (!n->is("BatchNormalization")) continue;
    ++bns;
    const viz::NodeDiff* nd = d.find_before(n->name());
    ASSERT_NE(nd, nullptr);
    EXPECT_EQ(nd->change, viz::Change::kFused) << n->name();
    ASSERT_EQ(nd->counterparts.size(), 1u) << n->name();
    const ir::Node* conv = n->input(0)->producer();
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(nd->counterparts[0].first, conv->name()) << n->name();
    const std::string& op = nd->counterparts[0].second;
    EXPECT_TRUE(op == "Conv" || op == "FusedConv") << n->name() << " went into " << op;
    const viz::NodeDiff* into = d.find_after(conv->name());
    ASSERT_NE(into, nullptr);
    EXPECT_EQ(into->change, viz::Change::kFused);
  }
  EXPECT_EQ(bns, 20);
}

TEST(Diff, Resnet18BatchNormsFusedInMemory) {
  const std::string path = test::shared_model_path("resnet18");
  if (path.empty()) return;
  auto before = viz::load_for_drawing(path);
  ASSERT_TRUE(before.is_ok());
  test::Optimized after = test::optimize(path, "fold,fuse");
  const viz::GraphDiff d = viz::diff_graphs(*before->graph, *after.model.graph);
  EXPECT_FALSE(d.inferred);
  expect_bn_fused_into_conv(*before->graph, d);
  EXPECT_EQ(d.op_counts.at("BatchNormalization"), std::make_pair(20, 0));
}

TEST(Diff, Resnet18BatchNormsFusedBetweenFiles) {
  const std::string path = test::shared_model_path("resnet18");
  if (path.empty()) return;
  const fs::path dir = fs::temp_directory_path() / "xopt_viz_diff_test";
  fs::create_directories(dir);
  test::Optimized after = test::optimize(path, "fold,fuse");
  const std::string saved = (dir / "resnet18.opt.onnx").string();
  ASSERT_TRUE(ir::save_model(after.model, saved).is_ok());
  auto a = viz::load_for_drawing(path);
  auto b = viz::load_for_drawing(saved);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const viz::GraphDiff d = viz::diff_graphs(*a->graph, *b->graph);
  EXPECT_TRUE(d.inferred);
  expect_bn_fused_into_conv(*a->graph, d);

  // The command line: the SVG marks 20 BatchNormalizations "fused into".
  const std::string out = (dir / "diff.svg").string();
  const std::string cmd = std::string(XVIZ_BIN) + " diff " + path + " " + saved + " -o " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  Xml x(ss.str());
  ASSERT_TRUE(x.ok());
  int marked = 0;
  for (xmlNodePtr t : x.select("//svg:g[@class='node']//svg:text"))
    marked += Xml::text(t).find("fused into") != std::string::npos;
  EXPECT_GE(marked, 20);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xopt

namespace xopt {
namespace {

// Between files, the nodes a fusion created under new names (bert_mini's attention: MatMuls and
// MultiHeadAttention) are part of the fusion they feed, not new.
TEST(Diff, BertMiniAttentionIsPartOfAFusionBetweenFiles) {
  const std::string path = test::shared_model_path("bert_mini");
  if (path.empty()) return;
  const fs::path dir = fs::temp_directory_path() / "xopt_viz_diff_bert";
  fs::create_directories(dir);
  test::Optimized after = test::optimize(path, "fold,fuse");
  const std::string saved = (dir / "bert_mini.opt.onnx").string();
  ASSERT_TRUE(ir::save_model(after.model, saved).is_ok());
  auto a = viz::load_for_drawing(path);
  auto b = viz::load_for_drawing(saved);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const viz::GraphDiff d = viz::diff_graphs(*a->graph, *b->graph);
  int attention = 0;
  for (const viz::NodeDiff& n : d.after) {
    EXPECT_NE(n.change, viz::Change::kNew) << n.op << " " << n.name;
    if (n.op != "MultiHeadAttention") continue;
    ++attention;
    EXPECT_EQ(n.change, viz::Change::kFused);
    EXPECT_FALSE(n.counterparts.empty());
  }
  EXPECT_EQ(attention, 4);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xopt
