// Graphs drawn through Graphviz read back: DOT with cgraph (same node and edge counts), SVG as XML
// (one node group per drawn node, the expected labels), clusters by name scope and collapsing.
#include <graphviz/cgraph.h>

#include <regex>

#include "ir/text.h"
#include "tests/util/test_util.h"
#include "tests/viz/viz_test_util.h"
#include "viz/graph_drawing.h"

namespace xopt {
namespace {

using test::Xml;

constexpr const char* kSmall = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1,3,8,8] x) => (float[1,2,4,4] y)
    <float[2,3,1,1] w = {1, 2, 3, 4, 5, 6}, float[2] b = {0.5, -0.5}> {
    c = Conv <kernel_shape = [1, 1], strides = [2, 2]> (x, w, b)
    r = Relu (c)
    t = Transpose <perm = [0, 1, 3, 2]> (r)
    y = Identity (t)
  })";

ir::Model small_model() {
  auto m = ir::parse_model_text(kSmall);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_TRUE(ir::infer_shapes(*m->graph).is_ok());
  return std::move(*m);
}

// Node and edge counts of DOT text read back with cgraph.
std::pair<int, int> dot_counts(const std::string& dot) {
  Agraph_t* g = agmemread(dot.c_str());
  EXPECT_NE(g, nullptr) << "cgraph cannot read the DOT text";
  if (!g) return {-1, -1};
  std::pair<int, int> counts{agnnodes(g), agnedges(g)};
  agclose(g);
  return counts;
}

std::string all_text(const Xml& x) {
  std::string s;
  for (xmlNodePtr t : x.select("//svg:text")) s += Xml::text(t) + "\n";
  return s;
}

TEST(GraphDrawing, DotParsesBackWithTheSameCounts) {
  ir::Model m = small_model();
  auto d = viz::draw_graph(*m.graph, viz::Format::kDot);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  // Four ops, the input and the output; the weights are folded into the Conv card.
  EXPECT_EQ(d->stats.nodes.size(), 6u);
  EXPECT_EQ(d->stats.edges, 5u);
  EXPECT_EQ(dot_counts(d->data), std::make_pair(6, 5));
}

TEST(GraphDrawing, SvgHasOneGroupPerNodeAndTheCards) {
  ir::Model m = small_model();
  auto d = viz::draw_graph(*m.graph, viz::Format::kSvg);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  Xml x(d->data);
  ASSERT_TRUE(x.ok()) << "the SVG is not well-formed XML";
  EXPECT_EQ(x.select("//svg:g[@class='node']").size(), d->stats.nodes.size());
  for (const auto& n : d->stats.nodes)
    EXPECT_EQ(x.select("//svg:g[@class='node'][@id='" + n.id + "']").size(), 1u) << n.id;
  const std::string text = all_text(x);
  for (const char* label : {"Conv", "Relu", "Transpose", "k1x1 s2", "perm 0,1,3,2", "f32 1x2x4x4",
                            "weights 32 B", "convolution", "activation"})
    EXPECT_NE(text.find(label), std::string::npos) << label << " missing from\n" << text;
}

TEST(GraphDrawing, ShowWeightsDrawsInitializers) {
  ir::Model m = small_model();
  viz::GraphOptions o;
  o.show_weights = true;
  auto d = viz::draw_graph(*m.graph, viz::Format::kDot, o);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_EQ(d->stats.nodes.size(), 8u);
  EXPECT_EQ(d->stats.edges, 7u);
  EXPECT_EQ(dot_counts(d->data), std::make_pair(8, 7));
}

TEST(GraphDrawing, PngAndPdfRender) {
  ir::Model m = small_model();
  auto png = viz::draw_graph(*m.graph, viz::Format::kPng);
  ASSERT_TRUE(png.is_ok()) << png.status().message();
  EXPECT_EQ(png->data.substr(1, 3), "PNG");
  auto pdf = viz::draw_graph(*m.graph, viz::Format::kPdf);
  ASSERT_TRUE(pdf.is_ok()) << pdf.status().message();
  EXPECT_EQ(pdf->data.substr(0, 4), "%PDF");
}

TEST(GraphDrawing, NamesWithoutScopesDrawWithoutClusters) {
  ir::Model m = small_model();
  auto d = viz::draw_graph(*m.graph, viz::Format::kDot);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->stats.clusters, 0u);
}

TEST(GraphDrawing, Resnet18ClustersByScopeAndCollapses) {
  const std::string path = test::shared_model_path("resnet18");
  if (path.empty()) return;
  auto m = viz::load_for_drawing(path);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  auto full = viz::draw_graph(*m->graph, viz::Format::kDot);
  ASSERT_TRUE(full.is_ok()) << full.status().message();
  EXPECT_GT(full->stats.clusters, 8u);  // layer1..layer4 and their blocks
  EXPECT_EQ(dot_counts(full->data), std::make_pair(static_cast<int>(full->stats.nodes.size()),
                                                   static_cast<int>(full->stats.edges)));

  viz::GraphOptions o;
  o.collapse_depth = 1;  // layer1 stays a cluster; layer1.0 becomes one box
  auto collapsed = viz::draw_graph(*m->graph, viz::Format::kSvg, o);
  ASSERT_TRUE(collapsed.is_ok()) << collapsed.status().message();
  EXPECT_LT(collapsed->stats.nodes.size(), full->stats.nodes.size() / 2);
  Xml x(collapsed->data);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x.select("//svg:g[@class='node']").size(), collapsed->stats.nodes.size());
  size_t boxes = 0;
  for (const auto& n : collapsed->stats.nodes) boxes += n.kind == "collapsed";
  EXPECT_EQ(boxes, 8u);  // two blocks in each of the four layers
  EXPECT_NE(all_text(x).find("layer1/layer1.0"), std::string::npos);
}

TEST(GraphDrawing, FusedNodesSayHowManyOriginalsTheyReplaced) {
  const std::string path = test::shared_model_path("resnet18");
  if (path.empty()) return;
  test::Optimized opt = test::optimize(path, "fold,fuse");
  auto d = viz::draw_graph(*opt.model.graph, viz::Format::kSvg);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  Xml x(d->data);
  ASSERT_TRUE(x.ok());
  const std::string text = all_text(x);
  EXPECT_TRUE(std::regex_search(text, std::regex("fused: replaces [0-9]+ nodes"))) << text;
}

}  // namespace
}  // namespace xopt
