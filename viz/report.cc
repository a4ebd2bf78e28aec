#include "viz/report.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "planner/memory_breakdown.h"
#include "planner/offload.h"
#include "viz/breakdown.h"
#include "viz/diff.h"
#include "viz/format.h"
#include "viz/graph_drawing.h"
#include "viz/output.h"
#include "viz/precision_marks.h"
#include "viz/report_script.h"
#include "viz/timeline.h"

namespace xopt::viz {
namespace {

std::string row(const std::string& k, const std::string& v) {
  return "<tr><td>" + xml_escape(k) + "</td><td>" + xml_escape(v) + "</td></tr>";
}

// The plan's breakdown, with the model's offload schedule when it carries one.
planner::MemoryBreakdown report_breakdown(const ReportInputs& in) {
  if (in.model != nullptr) {
    auto offload = planner::read_offload(*in.model);
    if (offload.is_ok() && offload->has_value())
      return planner::memory_breakdown(*in.plan, &**offload);
  }
  return planner::memory_breakdown(*in.plan);
}

std::string summary_table(const ReportInputs& in) {
  std::string t = "<table class=\"summary\">";
  if (in.before && in.after)
    t += row("nodes", std::to_string(in.before->num_nodes()) + " -> " +
                          std::to_string(in.after->num_nodes()));
  if (const planner::MemoryPlan* p = in.plan) {
    const planner::MemoryBreakdown b = report_breakdown(in);
    t += row("batch", p->batch > 0 ? std::to_string(p->batch) : "as given");
    t += row(p->workspace_in_arena ? "activations + workspace (arena)" : "activations (arena)",
             compact_bytes(p->arena_bytes) + " (" + std::to_string(p->arena_bytes) +
                 " B, strategy " + p->strategy + ")");
    t += row("lower bound", compact_bytes(p->lower_bound) +
                                format(" (arena / lower bound = %.4f)", p->ratio_to_lower_bound()));
    if (p->input_naive_bytes)
      t += row("naive (model as given)",
               compact_bytes(p->input_naive_bytes) +
                   format(" (%.1fx the arena)",
                          static_cast<double>(p->input_naive_bytes) /
                              static_cast<double>(std::max<size_t>(p->arena_bytes, 1))));
    t += row(b.offloaded > 0 ? "parameters (resident on the device)" : "parameters",
             compact_bytes(b.parameters));
    if (b.has_offload) t += row("offload staging", compact_bytes(b.staging));
    if (b.workspace_in_arena && b.workspace == 0)
      t += row("workspace",
               "in the arena (largest node's: " + compact_bytes(b.largest_node_workspace) + ")");
    else
      t += row("workspace", compact_bytes(b.workspace));
    t += row("inputs/outputs", compact_bytes(b.io));
    std::string budget;
    if (b.budget > 0)
      budget = std::string(b.device_total() <= b.budget ? " (within" : " (OVER") +
               " the --mem-budget of " + compact_bytes(b.budget) + ")";
    t += row("device total", compact_bytes(b.device_total()) + budget);
    t += row(b.cuda_context_estimated ? "CUDA context (estimate)" : "CUDA context (measured)",
             compact_bytes(b.cuda_context));
    t += row("total", compact_bytes(b.total()) + " (device total + CUDA context)");
    if (b.has_offload)
      t += row("host: offloaded parameters (pinned)",
               compact_bytes(b.offloaded) + " (" + std::to_string(b.offloaded_weights) +
                   " weights, of " + compact_bytes(b.all_parameters()) + " parameters)");
  }
  return t + "</table>";
}

std::string stats_table(const std::string& stats_json) {
  if (stats_json.empty()) return "<p>no pass statistics</p>";
  auto j = nlohmann::json::parse(stats_json, nullptr, false);
  if (j.is_discarded() || !j.contains("passes")) return "<p>no pass statistics</p>";
  std::string t = "<p>" + xml_escape(j.value("pipeline", std::string())) +
                  "</p><table><tr><th>pass</th><th>runs</th><th>changed</th><th>removed</th>"
                  "<th>added</th><th>ms</th><th>counters</th></tr>";
  for (const auto& p : j["passes"]) {
    std::string counters;
    if (p.contains("counters"))
      for (const auto& [k, v] : p["counters"].items())
        counters += (counters.empty() ? "" : ", ") + k + ": " + v.dump();
    t += "<tr><td>" + xml_escape(p.value("name", std::string())) + "</td><td>" +
         std::to_string(p.value("runs", 0)) + "</td><td>" + std::to_string(p.value("changed", 0)) +
         "</td><td>" + std::to_string(p.value("nodes_removed", 0)) + "</td><td>" +
         std::to_string(p.value("nodes_added", 0)) + "</td><td>" +
         format("%.2f", 1e3 * p.value("seconds", 0.0)) + "</td><td class=\"left\">" +
         xml_escape(counters) + "</td></tr>";
  }
  return t + "</table>";
}

Result<std::string> graph_panel(const ir::Graph& g, const std::string& which,
                                const ReportInputs& in, GraphOptions o, nlohmann::json& outputs,
                                std::map<std::string, std::string>& ids) {
  o.id_prefix = which + "-";
  o.legend = true;
  o.title = which;
  if (in.collapse_depth >= 0 && g.num_nodes() > in.collapse_above)
    o.collapse_depth = in.collapse_depth;
  XOPT_ASSIGN_OR_RETURN(GraphDrawing d, draw_graph(g, Format::kSvg, o));
  for (const DrawnNode& n : d.stats.nodes) {
    outputs[n.id] = n.outputs;
    if (n.kind == "op") ids[n.name] = n.id;
  }
  return "<div class=\"panel\"><h3>" + which + " (" + std::to_string(g.num_nodes()) +
         " nodes)</h3><div class=\"viewport\" id=\"view-" + which + "\">" + svg_fragment(d.data) +
         "</div></div>";
}

}  // namespace

Result<std::string> report_html(const ReportInputs& in) {
  if (!in.after) return invalid_argument("report: no optimized graph");
  nlohmann::json outputs = nlohmann::json::object();
  std::string body = "<h1>" + xml_escape(in.heading + ": " + in.title) +
                     "</h1><div id=\"selfcheck\" data-status=\"pending\">self-check pending "
                     "(needs JavaScript)</div>\n";
  body += "<h2>Summary</h2>" + summary_table(in);
  if (!in.stats_json.empty()) body += "<h2>Passes</h2>" + stats_table(in.stats_json);
  body +=
      std::string("<h2>Graphs</h2><p class=\"hint\">Wheel to zoom, drag to pan; click a node to ") +
      (in.plan ? "see its output in the memory timeline (and its counterparts in the other "
                 "graph), or a rectangle of the timeline to find its node.</p>"
               : "mark its counterparts in the other graph (a fused node and the originals "
                 "it replaced).</p>") +
      "<div id=\"selection\"></div><div class=\"graphs\">";
  // Both graphs marked by change (provenance is exact here: the passes just ran); a click on a
  // node also marks its counterparts on the other side (a fused node and its originals).
  GraphOptions before_marks, after_marks;
  nlohmann::json links = nlohmann::json::object();
  std::map<std::string, std::string> before_ids, after_ids;
  std::optional<GraphDiff> diff;
  if (in.before) {
    diff = diff_graphs(*in.before, *in.after);
    before_marks = diff_marks(*diff, true, "");
    after_marks = diff_marks(*diff, false, "");
    XOPT_ASSIGN_OR_RETURN(std::string panel,
                          graph_panel(*in.before, "before", in, before_marks, outputs, before_ids));
    body += panel;
  }
  XOPT_ASSIGN_OR_RETURN(std::string panel,
                        graph_panel(*in.after, "after", in, after_marks, outputs, after_ids));
  body += panel + "</div>\n";
  if (diff) {
    for (const NodeDiff& n : diff->after) {
      auto id = after_ids.find(n.name);
      if (id == after_ids.end()) continue;
      for (const auto& [name, op] : n.counterparts) {
        auto other = before_ids.find(name);
        if (other == before_ids.end()) continue;
        links[id->second].push_back(other->second);
        links[other->second].push_back(id->second);
      }
    }
    body += "<h2>Op counts</h2>" + op_count_table_html(*diff);
  }
  if (in.model != nullptr) body += precision_table_html(*in.model);  // "" for fp32 models
  if (in.plan) {
    TimelineOptions t;
    t.title = in.title;
    body += "<h2>Memory timeline</h2><div id=\"timeline\">" + timeline_svg(*in.plan, in.after, t) +
            "</div>\n";
    BreakdownBar bar{in.title, report_breakdown(in)};
    if (bar.breakdown.offloaded > 0) bar.label += " (offload)";
    body += "<h2>Memory breakdown</h2>" + breakdown_svg({bar});
  }
  // JSON inside <script type="application/json">: only "</" could end the element early.
  std::string data = nlohmann::json{{"outputs", outputs}, {"links", links}}.dump();
  for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 2))
    data.replace(at, 2, "<\\/");
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                     xml_escape(in.heading + ": " + in.title) + "</title><style>" + kReportCss +
                     "</style></head><body>\n" + body +
                     "<script type=\"application/json\" id=\"node-outputs\">" + data +
                     "</script>\n<script>" + kReportJs + "</script>\n</body></html>\n";
  return page;
}

}  // namespace xopt::viz
