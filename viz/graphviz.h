// A thin RAII layer over Graphviz's libraries: cgraph builds the graph, gvc lays it out with `dot`
// and renders it in memory (gvRenderData). No subprocess, no `dot` binary.
#pragma once

#include <string>

#include "common/status.h"

// Forward declarations of the cgraph types (graphviz/cgraph.h stays out of our headers).
typedef struct Agraph_s Agraph_t;
typedef struct Agnode_s Agnode_t;
typedef struct Agedge_s Agedge_t;

namespace xopt::viz {

enum class Format { kDot, kSvg, kPng, kPdf };

// From a file name's extension: .dot/.gv, .svg, .png, .pdf.
Result<Format> format_from_path(const std::string& path);
const char* format_name(Format f);

class GvGraph {
 public:
  explicit GvGraph(const std::string& name);
  ~GvGraph();
  GvGraph(const GvGraph&) = delete;
  GvGraph& operator=(const GvGraph&) = delete;

  Agraph_t* root() const { return g_; }
  // A node created in `in` (a cluster) or in the root graph.
  Agnode_t* node(const std::string& id, Agraph_t* in = nullptr);
  Agedge_t* edge(Agnode_t* from, Agnode_t* to);
  // A cluster ("cluster_<id>") inside `parent`.
  Agraph_t* cluster(Agraph_t* parent, const std::string& id);

  // Attribute defaults for every graph / node / edge (declared once, fast to set afterwards).
  void graph_default(const char* name, const std::string& value);
  void node_default(const char* name, const std::string& value);
  void edge_default(const char* name, const std::string& value);
  // Sets an attribute on a graph, node or edge; `html` marks an HTML-like label (<...> in DOT).
  void set(void* object, const char* name, const std::string& value, bool html = false);

  // DOT text of the graph as built (no layout), or laid out with dot and rendered.
  Result<std::string> render(Format f) const;

 private:
  Agraph_t* g_;
};

}  // namespace xopt::viz
