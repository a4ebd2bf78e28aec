#include "viz/graph_drawing.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "viz/format.h"
#include "viz/node_card.h"
#include "viz/op_family.h"
#include "viz/scope.h"

namespace xopt::viz {
namespace {

// Cluster fills by nesting depth: light enough that node colours stay the loudest thing.
const char* cluster_fill(int depth) {
  static const char* fills[] = {"#f7f7f7", "#eeeeee", "#e6e6e6", "#dddddd"};
  return fills[std::min(depth - 1, 3)];
}

// A collapsed scope mixes families: a neutral fill, named in the legend.
constexpr const char* kCollapsedFill = "#dbe4ee";

class Builder {
 public:
  Builder(GvGraph& gv, const ir::Graph& g, const GraphOptions& o)
      : gv_(gv), g_(g), o_(o), nodes_(g.node_list()) {
    for (size_t i = 0; i < nodes_.size(); ++i) index_[nodes_[i]] = i;
    // Nodes computing from constants only (Constant, Identity of a weight, ...) are weights too.
    for (const ir::Value* v : g.initializers())
      if (v->is_constant()) constant_.insert(v);
    for (const ir::Node* n : nodes_) {
      bool all = true;
      for (const ir::Value* in : n->inputs()) all = all && (!in || constant_.count(in));
      if (!all) continue;
      hidden_.insert(n);
      for (const ir::Value* out : n->outputs())
        if (out) constant_.insert(out);
    }
    rep_.assign(nodes_.size(), nullptr);
    home_.assign(nodes_.size(), nullptr);
  }

  GraphStats build(Agraph_t* parent) {
    ScopeTree tree;
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (drawn(*nodes_[i]))
        tree.add(o_.clusters ? name_scope(nodes_[i]->name()) : std::vector<std::string>{}, i);
    tree.simplify();
    emit(tree, parent ? parent : gv_.root());
    add_inputs(parent ? parent : gv_.root());
    add_edges();
    add_outputs(parent ? parent : gv_.root());
    return std::move(stats_);
  }

 private:
  bool drawn(const ir::Node& n) const { return o_.show_weights || !hidden_.count(&n); }
  std::string id(const std::string& kind, size_t k) const {
    return o_.id_prefix + kind + std::to_string(k);
  }

  Agnode_t* new_node(Agraph_t* in, DrawnNode d) {
    Agnode_t* n = gv_.node(d.id, in);
    gv_.set(n, "id", d.id);
    stats_.nodes.push_back(std::move(d));
    return n;
  }

  void emit(const ScopeTree& t, Agraph_t* sub) {
    for (size_t i : t.items) add_op(i, sub);
    for (const auto& [name, child] : t.children) {
      if (o_.collapse_depth >= 0 && child->depth > o_.collapse_depth) {
        add_collapsed(*child, sub);
        continue;
      }
      Agraph_t* c = gv_.cluster(sub, o_.id_prefix + std::to_string(++stats_.clusters));
      gv_.set(c, "label", child->name);
      gv_.set(c, "tooltip", child->path);
      gv_.set(c, "fillcolor", cluster_fill(child->depth));
      emit(*child, c);
    }
  }

  void add_op(size_t i, Agraph_t* sub) {
    const ir::Node& n = *nodes_[i];
    DrawnNode d{id("n", i), "op", n.name(), n.op_type(), {}};
    for (const ir::Value* v : n.outputs())
      if (v) d.outputs.push_back(v->name());
    Agnode_t* a = new_node(sub, std::move(d));
    auto m = o_.marks.find(n.name());
    std::string label = node_card_html(n, !o_.show_weights, m == o_.marks.end());
    gv_.set(a, "fillcolor", op_family(n.op_type()).colour);
    gv_.set(a, "tooltip", node_tooltip(n));
    if (m != o_.marks.end()) {
      gv_.set(a, "color", m->second.colour);
      gv_.set(a, "penwidth", "3");
      if (m->second.dashed) gv_.set(a, "style", "rounded,filled,dashed");
      if (!m->second.note.empty())
        label += "<BR/><FONT POINT-SIZE=\"9\" COLOR=\"" + m->second.colour + "\"><B>" +
                 xml_escape(m->second.note) + "</B></FONT>";
    } else if (n.provenance().size() > 1) {
      gv_.set(a, "penwidth", "2");
    }
    gv_.set(a, "label", label, true);
    rep_[i] = a;
    home_[i] = sub;
  }

  void collect(const ScopeTree& t, std::vector<size_t>& out) {
    out.insert(out.end(), t.items.begin(), t.items.end());
    for (const auto& [name, child] : t.children) collect(*child, out);
  }

  void add_collapsed(const ScopeTree& t, Agraph_t* sub) {
    std::vector<size_t> items;
    collect(t, items);
    std::map<std::string, int> ops;
    size_t originals = 0;
    DrawnNode d{id("c", ++collapsed_), "collapsed", t.path, "", {}};
    for (size_t i : items) {
      ++ops[nodes_[i]->op_type()];
      originals += std::max<size_t>(1, nodes_[i]->provenance().size());
      for (const ir::Value* v : nodes_[i]->outputs())
        if (v) d.outputs.push_back(v->name());
    }
    std::vector<std::pair<int, std::string>> by_count;
    by_count.reserve(ops.size());
    for (const auto& [op, c] : ops) by_count.emplace_back(-c, op);
    std::sort(by_count.begin(), by_count.end());
    std::string label = "<B>" + xml_escape(t.path) + "</B><BR/><FONT POINT-SIZE=\"9\">" +
                        std::to_string(items.size()) + " nodes";
    if (originals != items.size()) label += " (" + std::to_string(originals) + " originally)";
    for (size_t k = 0; k < by_count.size(); ++k) {
      label += (k % 3 == 0 ? "<BR/>" : " \xC2\xB7 ") + xml_escape(by_count[k].second);
      if (by_count[k].first < -1) label += " \xC3\x97" + std::to_string(-by_count[k].first);
    }
    label += "</FONT>";
    Agnode_t* a = new_node(sub, std::move(d));
    gv_.set(a, "label", label, true);
    gv_.set(a, "fillcolor", kCollapsedFill);
    gv_.set(a, "peripheries", "2");
    gv_.set(a, "tooltip", t.path);
    for (size_t i : items) {
      rep_[i] = a;
      home_[i] = sub;
    }
  }

  void add_inputs(Agraph_t* root) {
    size_t k = 0;
    for (const ir::Value* v : g_.runtime_inputs()) {
      Agnode_t* a = new_node(root, {id("in", k++), "input", v->name(), "", {v->name()}});
      set_io_card(a, *v);
      values_[v] = a;
    }
  }

  void add_outputs(Agraph_t* root) {
    size_t k = 0;
    for (const ir::Value* v : g_.outputs()) {
      Agnode_t* src = source(v);
      Agnode_t* a = new_node(root, {id("out", k++), "output", v->name(), "", {}});
      set_io_card(a, *v);
      if (src) edge(src, a, *v);
    }
  }

  void set_io_card(Agnode_t* a, const ir::Value& v) {
    gv_.set(a, "shape", "ellipse");
    gv_.set(a, "style", "filled");
    gv_.set(a, "fillcolor", io_family().colour);
    gv_.set(a, "label",
            "<B>" + xml_escape(v.name()) + "</B><BR/><FONT POINT-SIZE=\"9\">" +
                xml_escape(value_summary(v)) + "</FONT>",
            true);
  }

  // The drawn node a value comes from (nullptr: a hidden constant).
  Agnode_t* source(const ir::Value* v) {
    if (v->producer()) {
      auto it = index_.find(v->producer());
      return it == index_.end() ? nullptr : rep_[it->second];
    }
    if (auto it = values_.find(v); it != values_.end()) return it->second;
    return nullptr;
  }

  Agnode_t* weight_node(const ir::Value* v, Agraph_t* home) {
    if (auto it = values_.find(v); it != values_.end()) return it->second;
    Agnode_t* a = new_node(home, {id("w", ++weights_), "weight", v->name(), "", {v->name()}});
    gv_.set(a, "shape", "note");
    gv_.set(a, "style", "filled");
    gv_.set(a, "fillcolor", op_family("Constant").colour);
    gv_.set(a, "label",
            "<FONT POINT-SIZE=\"9\">" + xml_escape(v->name()) + "<BR/>" +
                xml_escape(value_summary(*v)) + "</FONT>",
            true);
    values_[v] = a;
    return a;
  }

  void edge(Agnode_t* from, Agnode_t* to, const ir::Value& v) {
    if (from == to || !seen_.insert({from, to}).second) return;
    Agedge_t* e = gv_.edge(from, to);
    gv_.set(e, "tooltip", v.name() + "  " + value_summary(v));
    ++stats_.edges;
  }

  void add_edges() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!rep_[i]) continue;
      for (const ir::Value* v : nodes_[i]->inputs()) {
        if (!v) continue;
        Agnode_t* src = source(v);
        if (!src && o_.show_weights && !v->producer() && v->is_initializer())
          src = weight_node(v, home_[i]);
        if (src) edge(src, rep_[i], *v);
      }
    }
  }

  GvGraph& gv_;
  const ir::Graph& g_;
  const GraphOptions& o_;
  std::vector<ir::Node*> nodes_;
  std::unordered_map<const ir::Node*, size_t> index_;
  std::vector<Agnode_t*> rep_;
  std::vector<Agraph_t*> home_;
  std::unordered_map<const ir::Value*, Agnode_t*> values_;
  std::set<std::pair<Agnode_t*, Agnode_t*>> seen_;
  std::unordered_set<const ir::Value*> constant_;
  std::unordered_set<const ir::Node*> hidden_;
  GraphStats stats_;
  size_t collapsed_ = 0;
  size_t weights_ = 0;
};

}  // namespace

void set_graph_style(GvGraph& gv) {
  gv.graph_default("rankdir", "TB");
  gv.graph_default("fontname", "Helvetica");
  gv.graph_default("fontsize", "11");
  gv.graph_default("nodesep", "0.2");
  gv.graph_default("ranksep", "0.3");
  gv.graph_default("style", "rounded,filled");
  gv.graph_default("color", "#b0b0b0");
  gv.graph_default("labeljust", "l");
  gv.node_default("shape", "box");
  gv.node_default("style", "rounded,filled");
  gv.node_default("fontname", "Helvetica");
  gv.node_default("fontsize", "11");
  gv.node_default("margin", "0.08,0.03");
  gv.node_default("height", "0.3");
  gv.node_default("penwidth", "1");
  gv.node_default("color", "#555555");
  gv.edge_default("color", "#666666");
  gv.edge_default("arrowsize", "0.6");
}

std::string legend_html(const ir::Graph& g, const std::string& title, bool collapsed,
                        bool weights) {
  std::set<std::string> used;
  for (const ir::Node* n : g.nodes()) used.insert(op_family(n->op_type()).name);
  std::string cells;
  for (const OpFamily& f : op_families())
    if (used.count(f.name))
      cells += std::string("<TD BGCOLOR=\"") + f.colour + "\" BORDER=\"1\">" + xml_escape(f.name) +
               "</TD>";
  if (weights)
    cells += std::string("<TD BGCOLOR=\"") + op_family("Constant").colour +
             "\" BORDER=\"1\">weight (initializer)</TD>";
  if (collapsed)
    cells +=
        std::string("<TD BGCOLOR=\"") + kCollapsedFill + "\" BORDER=\"1\">collapsed scope</TD>";
  std::string html = "<TABLE BORDER=\"0\" CELLSPACING=\"3\" CELLPADDING=\"3\">";
  if (!title.empty())
    html += "<TR><TD ALIGN=\"LEFT\" COLSPAN=\"20\"><B>" + xml_escape(title) + "</B></TD></TR>";
  html += "<TR>" + cells + "</TR></TABLE>";
  return html;
}

GraphStats add_graph(GvGraph& gv, Agraph_t* parent, const ir::Graph& g, const GraphOptions& o) {
  return Builder(gv, g, o).build(parent);
}

Result<GraphDrawing> draw_graph(const ir::Graph& g, Format f, const GraphOptions& o) {
  GvGraph gv("G");
  set_graph_style(gv);
  GraphDrawing d;
  d.stats = add_graph(gv, nullptr, g, o);
  // Big graphs: cap dot's crossing-minimisation and network-simplex iterations (layout time
  // grows much faster than the drawing improves).
  if (d.stats.nodes.size() > 400) {
    gv.set(gv.root(), "mclimit", "0.3");
    gv.set(gv.root(), "nslimit", "2");
    gv.set(gv.root(), "nslimit1", "2");
  }
  // Set last: a root attribute set before the clusters exist would become their default.
  if (o.legend) {
    auto drew = [&](const char* kind) {
      for (const DrawnNode& n : d.stats.nodes)
        if (n.kind == kind) return true;
      return false;
    };
    gv.set(gv.root(), "label", legend_html(g, o.title, drew("collapsed"), drew("weight")), true);
    gv.set(gv.root(), "labelloc", "t");
  }
  XOPT_ASSIGN_OR_RETURN(d.data, gv.render(f));
  return d;
}

}  // namespace xopt::viz
