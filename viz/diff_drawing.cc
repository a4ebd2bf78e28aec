// Drawing a GraphDiff: A and B side by side, each node's border coloured by its change.
#include <filesystem>

#include "viz/diff.h"
#include "viz/format.h"
#include "viz/graph_drawing.h"
#include "viz/output.h"
#include "viz/report.h"

namespace xopt::viz {
namespace {

const char* change_colour(Change c) {
  switch (c) {
    case Change::kRemoved:
      return "#d7191c";
    case Change::kNew:
      return "#1a9641";
    case Change::kFused:
      return "#e66101";
    case Change::kChanged:
      return "#2c7bb6";
    case Change::kKept:
      return "#555555";
  }
  return "#555555";
}

std::string ops_of(const NodeDiff& d) {
  std::string s;
  for (size_t i = 0; i < d.counterparts.size(); ++i) {
    if (i == 4) return s + " +" + std::to_string(d.counterparts.size() - 4);
    s += (i ? " + " : "") + d.counterparts[i].second;
  }
  return s;
}

// The op of the fused node `d` is part of (between files).
std::string part_of_op(const GraphDiff& diff, const NodeDiff& d) {
  const NodeDiff* whole = diff.find_after(d.part_of);
  return whole ? whole->op : d.part_of;
}

}  // namespace

GraphOptions diff_marks(const GraphDiff& diff, bool before, const std::string& prefix) {
  const std::vector<NodeDiff>& nodes = before ? diff.before : diff.after;
  GraphOptions o;
  o.id_prefix = prefix;
  o.legend = false;
  for (const NodeDiff& d : nodes) {
    if (d.change == Change::kKept) continue;
    NodeMark m;
    m.colour = change_colour(d.change);
    if (before) {
      m.dashed = d.change == Change::kRemoved;
      if (d.change == Change::kRemoved) m.note = "removed";
      if (d.change == Change::kFused) m.note = "fused into " + d.counterparts[0].second;
      if (d.change == Change::kChanged) m.note = "became " + d.counterparts[0].second;
    } else {
      if (d.change == Change::kNew) m.note = "new";
      if (d.change == Change::kFused)
        m.note = d.part_of.empty()
                     ? "fused " + std::to_string(d.counterparts.size()) + ": " + ops_of(d)
                     : "part of a fused " + part_of_op(diff, d);
      if (d.change == Change::kChanged) m.note = "was " + d.counterparts[0].second;
    }
    o.marks[d.name] = m;
  }
  return o;
}

namespace {

// Counts of each change, e.g. "20 fused into 20, 1 removed".
std::string summary(const GraphDiff& d) {
  int fused_a = 0, fused_b = 0, removed = 0, added = 0, changed = 0;
  for (const auto& n : d.before) {
    fused_a += n.change == Change::kFused;
    removed += n.change == Change::kRemoved;
  }
  for (const auto& n : d.after) {
    fused_b += n.change == Change::kFused;
    added += n.change == Change::kNew;
    changed += n.change == Change::kChanged;
  }
  return format("%zu nodes -> %zu: %d fused into %d, %d removed, %d new, %d changed%s",
                d.before.size(), d.after.size(), fused_a, fused_b, removed, added, changed,
                d.inferred ? " (matched by names and value flow)" : " (matched by provenance)");
}

std::string label_html(const GraphDiff& d, const std::string& title, bool op_table) {
  std::string t = "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">";
  t += "<TR><TD COLSPAN=\"4\" BORDER=\"0\" ALIGN=\"LEFT\"><B>" +
       xml_escape(title.empty() ? std::string("diff") : title) + "</B>: " + xml_escape(summary(d)) +
       "</TD></TR>";
  t += "<TR><TD COLSPAN=\"4\" BORDER=\"0\" ALIGN=\"LEFT\">";
  for (Change c : {Change::kRemoved, Change::kFused, Change::kNew, Change::kChanged})
    t += std::string("<FONT COLOR=\"") + change_colour(c) + "\"><B>\xE2\x96\xA0 " + change_name(c) +
         "</B></FONT>   ";
  t += "</TD></TR>";
  if (!op_table) return t + "</TABLE>";
  t += "<TR><TD><B>op</B></TD><TD><B>before</B></TD><TD><B>after</B></TD>"
       "<TD><B>change</B></TD></TR>";
  for (const auto& [op, c] : d.op_counts) {
    const int delta = c.second - c.first;
    t += "<TR><TD ALIGN=\"LEFT\">" + xml_escape(op) + "</TD><TD>" + std::to_string(c.first) +
         "</TD><TD>" + std::to_string(c.second) + "</TD><TD>" +
         (delta == 0 ? std::string("") : format("%+d", delta)) + "</TD></TR>";
  }
  return t + "</TABLE>";
}

}  // namespace

std::string op_count_table_html(const GraphDiff& d) {
  std::string t = "<p>" + xml_escape(summary(d)) +
                  "</p><table class=\"ops\"><tr><th>op</th><th>before</th><th>after</th>"
                  "<th>change</th></tr>";
  for (const auto& [op, c] : d.op_counts) {
    const int delta = c.second - c.first;
    t += "<tr><td>" + xml_escape(op) + "</td><td>" + std::to_string(c.first) + "</td><td>" +
         std::to_string(c.second) + "</td><td>" +
         (delta == 0 ? std::string("") : format("%+d", delta)) + "</td></tr>";
  }
  return t + "</table>";
}

Result<std::string> diff_drawing(const ir::Graph& a, const ir::Graph& b, const GraphDiff& d,
                                 Format f, const std::string& title, bool op_table) {
  GvGraph gv("diff");
  set_graph_style(gv);
  Agraph_t* left = gv.cluster(nullptr, "before");
  gv.set(left, "label", "before");
  gv.set(left, "fillcolor", "#ffffff");
  Agraph_t* right = gv.cluster(nullptr, "after");
  gv.set(right, "label", "after");
  gv.set(right, "fillcolor", "#ffffff");
  add_graph(gv, left, a, diff_marks(d, true, "a-"));
  add_graph(gv, right, b, diff_marks(d, false, "b-"));
  gv.set(gv.root(), "label", label_html(d, title, op_table), true);
  gv.set(gv.root(), "labelloc", "t");
  return gv.render(f);
}

Result<std::string> diff_file(const ir::Model& a, const ir::Model& b, const std::string& out_path) {
  const std::string title = std::filesystem::path(a.path).filename().string() + " vs " +
                            std::filesystem::path(b.path).filename().string();
  if (is_html_path(out_path)) {
    // The report's page without a plan: both graphs marked by change, pan and zoom, op counts,
    // and a click on a fused node marks the originals it replaced (and back).
    ReportInputs in;
    in.heading = "xviz diff";
    in.title = title;
    in.before = a.graph.get();
    in.after = b.graph.get();
    return report_html(in);
  }
  XOPT_ASSIGN_OR_RETURN(Format f, format_from_path(out_path));
  return diff_drawing(*a.graph, *b.graph, diff_graphs(*a.graph, *b.graph), f, title);
}

}  // namespace xopt::viz
