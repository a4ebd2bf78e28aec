#include "viz/graphviz.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#ifdef XOPT_GV_BUILTIN_PLUGINS
#include <graphviz/gvplugin.h>
#endif

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#ifdef XOPT_GV_BUILTIN_PLUGINS
// The plugins we use, linked in: dot layout; core renderers (svg, dot); cairo (png, pdf). Graphviz
// then needs neither its plugin config nor its plugin folder at run time (a bundle that carries its
// libraries but not /usr/lib/.../graphviz/config6 could not lay out a graph).
extern "C" {
extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
extern gvplugin_library_t gvplugin_core_LTX_library;
extern gvplugin_library_t gvplugin_pango_LTX_library;
}
#endif

namespace xopt::viz {
namespace {

GVC_t* new_context() {
#ifdef XOPT_GV_BUILTIN_PLUGINS
  static const lt_symlist_t builtins[] = {
      {"gvplugin_dot_layout_LTX_library", &gvplugin_dot_layout_LTX_library},
      {"gvplugin_core_LTX_library", &gvplugin_core_LTX_library},
      {"gvplugin_pango_LTX_library", &gvplugin_pango_LTX_library},
      {nullptr, nullptr}};
  return gvContextPlugins(builtins, 0);
#else
  return gvContext();
#endif
}

// cgraph's API predates const; it does not modify these strings.
char* mut(const char* s) {
  return const_cast<char*>(s);
}
char* mut(const std::string& s) {
  return const_cast<char*>(s.c_str());
}

std::string lower_extension(const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// One Graphviz context for the process, never freed. Graphviz's pango plugin remembers the last
// font it measured by a pointer into the context's font table, so freeing a context and making
// another left it comparing against freed memory on the next render (ASan: heap-use-after-free in
// textspan_size). Graphviz is not thread-safe: renders take turns.
GVC_t* shared_context(std::unique_lock<std::mutex>& lock) {
  static std::mutex mutex;
  lock = std::unique_lock<std::mutex>(mutex);
  static GVC_t* const gvc = new_context();
  return gvc;
}

}  // namespace

Result<Format> format_from_path(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == "dot" || ext == "gv") return Format::kDot;
  if (ext == "svg") return Format::kSvg;
  if (ext == "png") return Format::kPng;
  if (ext == "pdf") return Format::kPdf;
  return invalid_argument(path + ": unknown output format (use .dot, .svg, .png or .pdf)");
}

const char* format_name(Format f) {
  switch (f) {
    case Format::kDot:
      return "dot";
    case Format::kSvg:
      return "svg";
    case Format::kPng:
      return "png";
    case Format::kPdf:
      return "pdf";
  }
  return "svg";
}

GvGraph::GvGraph(const std::string& name) : g_(agopen(mut(name), Agdirected, nullptr)) {}

GvGraph::~GvGraph() {
  agclose(g_);
}

Agnode_t* GvGraph::node(const std::string& id, Agraph_t* in) {
  return agnode(in ? in : g_, mut(id), 1);
}

Agedge_t* GvGraph::edge(Agnode_t* from, Agnode_t* to) {
  return agedge(g_, from, to, nullptr, 1);
}

Agraph_t* GvGraph::cluster(Agraph_t* parent, const std::string& id) {
  return agsubg(parent ? parent : g_, mut("cluster_" + id), 1);
}

void GvGraph::graph_default(const char* name, const std::string& value) {
  agattr(g_, AGRAPH, mut(name), mut(value));
}
void GvGraph::node_default(const char* name, const std::string& value) {
  agattr(g_, AGNODE, mut(name), mut(value));
}
void GvGraph::edge_default(const char* name, const std::string& value) {
  agattr(g_, AGEDGE, mut(name), mut(value));
}

void GvGraph::set(void* object, const char* name, const std::string& value, bool html) {
  if (!html) {
    agsafeset(object, mut(name), mut(value), mut(""));
    return;
  }
  // An HTML-like label is a string cgraph marks as such when it interns it.
  char* interned = agstrdup_html(g_, mut(value));
  agsafeset(object, mut(name), interned, mut(""));
  agstrfree(g_, interned);
}

Result<std::string> GvGraph::render(Format f) const {
  if (f == Format::kDot) {
    char* buffer = nullptr;
    size_t size = 0;
    FILE* stream = open_memstream(&buffer, &size);
    if (!stream) return internal_error("cannot open a memory stream for the DOT text");
    const int rc = agwrite(g_, stream);
    std::fclose(stream);
    std::string out(buffer ? buffer : "", size);
    std::free(buffer);
    if (rc != 0) return internal_error("cgraph could not write the DOT text");
    return out;
  }
  std::unique_lock<std::mutex> lock;
  GVC_t* const gvc = shared_context(lock);
  if (gvc == nullptr) return internal_error("cannot create a Graphviz context");
  agseterr(AGMAX);  // Graphviz must not print: errors come back through aglasterr()
  agreseterrors();
  if (gvLayout(gvc, g_, "dot") != 0) {
    gvFreeLayout(gvc, g_);
    const char* why = aglasterr();
    return internal_error(std::string("Graphviz layout failed: ") + (why ? why : "unknown"));
  }
  char* data = nullptr;
  unsigned int length = 0;
  const int rc = gvRenderData(gvc, g_, format_name(f), &data, &length);
  std::string out(data ? data : "", data ? length : 0);
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, g_);
  if (rc != 0) {
    return unsupported(std::string("Graphviz cannot render ") + format_name(f) +
                       " (is its plugin installed?)");
  }
  return out;
}

}  // namespace xopt::viz
