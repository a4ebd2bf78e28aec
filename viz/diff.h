// What changed between two models: nodes matched by provenance (the originals a fused node
// records), then by name; removed, new and fused nodes; op counts before and after.
//
// Provenance lives in memory only (the saved ONNX does not carry it), so for two files the
// originals of a node of B are inferred: the nodes of A that computed its outputs from its inputs
// (walking A back from each output name until B's inputs or nodes B kept).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "viz/graph_drawing.h"
#include "viz/graphviz.h"

namespace xopt::viz {

enum class Change {
  kKept,     // same name, same op, stands for itself only
  kRemoved,  // in A, nothing in B stands for it
  kNew,      // in B, stands for nothing in A
  kFused,    // A: replaced together with others by one node of B; B: that node
  kChanged,  // stands for exactly one node of A with another op or name
};
const char* change_name(Change c);

struct NodeDiff {
  std::string name;
  std::string op;
  Change change = Change::kKept;
  // A: the node of B it went into; B: the nodes of A it stands for (names and ops, in A's order).
  std::vector<std::pair<std::string, std::string>> counterparts;
  // B, between files only: the fused node this new node feeds and whose originals it shares.
  std::string part_of;
};

struct GraphDiff {
  std::vector<NodeDiff> before;                          // one per node of A, in A's order
  std::vector<NodeDiff> after;                           // one per node of B
  std::map<std::string, std::pair<int, int>> op_counts;  // op -> (in A, in B)
  bool inferred = false;  // B carried no provenance: matched through names and value flow
  const NodeDiff* find_before(const std::string& name) const;
  const NodeDiff* find_after(const std::string& name) const;
};

GraphDiff diff_graphs(const ir::Graph& a, const ir::Graph& b);

// Border colours and card notes marking each node's change, for drawing A (`before`) or B.
GraphOptions diff_marks(const GraphDiff& d, bool before, const std::string& id_prefix);
// The op-count table (HTML, for a page).
std::string op_count_table_html(const GraphDiff& d);
// A and B side by side in one Graphviz drawing, nodes marked by change, op counts as its label.
// `op_table`: the op counts in the drawing's label too (a page shows them as an HTML table).
Result<std::string> diff_drawing(const ir::Graph& a, const ir::Graph& b, const GraphDiff& d,
                                 Format f, const std::string& title = "", bool op_table = true);
// The diff as SVG, or as an HTML page (drawing + table) when `out_path` ends in .html.
Result<std::string> diff_file(const ir::Model& a, const ir::Model& b, const std::string& out_path);

}  // namespace xopt::viz
