// An ir::Graph drawn through Graphviz: node cards coloured by op family, nested clusters by name
// scope (collapsible), initializers folded into their consumers, a legend.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "viz/graphviz.h"

namespace xopt::viz {

// How the diff marks a node: its border colour and a line on its card.
struct NodeMark {
  std::string colour;  // border, "#rrggbb"
  std::string note;    // one more card line ("fused into /conv1/Conv")
  bool dashed = false;
};

struct GraphOptions {
  // Clusters deeper than this are drawn as one box with their op counts; -1 never collapses.
  int collapse_depth = -1;
  bool show_weights = false;  // draw initializers (and Constant nodes) as nodes of their own
  bool clusters = true;       // group nodes by name scope
  bool legend = true;
  std::string title;
  // Prefix of every Graphviz id (node ids become the SVG group ids), so that two graphs can share
  // one drawing or one page.
  std::string id_prefix;
  std::unordered_map<std::string, NodeMark> marks;  // by node name
};

// One box of the drawing.
struct DrawnNode {
  std::string id;                    // Graphviz id = SVG <g id>
  std::string kind;                  // "op", "input", "output", "weight", "collapsed"
  std::string name;                  // node, value or scope name
  std::string op;                    // op type ("" for inputs, outputs, weights, collapsed scopes)
  std::vector<std::string> outputs;  // values it produces (all of a collapsed scope's)
};

struct GraphStats {
  std::vector<DrawnNode> nodes;
  size_t edges = 0;
  size_t clusters = 0;
};

// Adds `g` to `gv` (inside `parent`, or at the root), returning what was drawn.
GraphStats add_graph(GvGraph& gv, Agraph_t* parent, const ir::Graph& g, const GraphOptions& o);
// Graph-wide look (fonts, shapes, spacing) shared by every drawing.
void set_graph_style(GvGraph& gv);
// HTML-like legend of the op families used by `g` (for a graph label); `collapsed` adds the
// collapsed-scope box, `weights` the initializer notes.
std::string legend_html(const ir::Graph& g, const std::string& title, bool collapsed = false,
                        bool weights = false);

struct GraphDrawing {
  std::string data;  // DOT / SVG text, or PNG / PDF bytes
  GraphStats stats;
};
Result<GraphDrawing> draw_graph(const ir::Graph& g, Format f, const GraphOptions& o = {});

}  // namespace xopt::viz
