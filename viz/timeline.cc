#include "viz/timeline.h"

#include "viz/raster.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "planner/annotate.h"
#include "planner/batch.h"
#include "planner/planner.h"
#include "viz/format.h"
#include "viz/op_family.h"
#include "viz/output.h"

namespace xopt::viz {
namespace {

using planner::MemoryPlan;
using planner::PlannedValue;

const ir::Node* producer_of(const ir::Graph* g, const std::string& value) {
  if (!g) return nullptr;
  const ir::Value* v = g->find_value(value);
  return v ? v->producer() : nullptr;
}

std::string tooltip(const PlannedValue& pv, const ir::Graph* g) {
  std::string t = pv.name;
  const ir::Value* v = g ? g->find_value(pv.name) : nullptr;
  if (v) t += "\n" + short_dtype(v->dtype()) + " " + shape_text(v->shape());
  t += "\n" + compact_bytes(pv.bytes) + " (" + std::to_string(pv.bytes) + " B; reserved " +
       std::to_string(pv.size) + " B at offset " + std::to_string(pv.offset) + ")";
  t += "\nsteps " + std::to_string(pv.first_step) + ".." + std::to_string(pv.last_step);
  if (!pv.alias_of.empty())
    t += "\n" + (pv.alias_kind.empty() ? std::string("alias") : pv.alias_kind) + " of " +
         pv.alias_of;
  if (pv.role == "workspace")
    t += "\nthe workspace of one node, live at its step only";
  else if (pv.role != "activation")
    t += "\ngraph " + pv.role;
  if (v && v->producer())
    t += "\nproducer: " + v->producer()->name() + " (" + v->producer()->op_type() + ")";
  if (v && v->has_uses()) {
    t += "\nreaders:";
    size_t k = 0;
    for (const ir::Use& u : v->uses()) {
      if (++k > 8) {
        t += " and " + std::to_string(v->uses().size() - 8) + " more";
        break;
      }
      t += (k > 1 ? ", " : " ") + u.node->name();
    }
  }
  return t;
}

std::string family_of(const PlannedValue& pv, const ir::Graph* g, std::string* colour) {
  const ir::Node* p = producer_of(g, pv.name);
  const OpFamily& f = pv.role == "workspace" ? workspace_family()
                      : p != nullptr         ? op_family(p->op_type())
                                             : io_family();
  *colour = f.colour;
  return f.name;
}

std::string axis_label(double x, double y, const std::string& text, const char* anchor) {
  return format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor) +
         xml_escape(text) + "</text>";
}

}  // namespace

std::string timeline_svg(const MemoryPlan& plan, const ir::Graph* g, const TimelineOptions& o,
                         TimelineGeometry* geometry) {
  const int steps = static_cast<int>(plan.node_order.size());
  size_t top_bytes = plan.arena_bytes;
  for (const PlannedValue& pv : plan.values) top_bytes = std::max(top_bytes, pv.offset + pv.size);
  // Bytes live at each step (roots only: an alias shares its root's bytes).
  std::vector<size_t> live(static_cast<size_t>(steps) + 1, 0);
  for (const PlannedValue& pv : plan.values) {
    if (!pv.alias_of.empty()) continue;
    for (int s = std::max(pv.first_step, -1); s <= std::min(pv.last_step, steps - 1); ++s)
      live[static_cast<size_t>(s) + 1] += pv.size;
  }
  size_t live_top = std::max({top_bytes, plan.lower_bound, size_t{1}});
  for (size_t b : live) live_top = std::max(live_top, b);
  for (size_t w : plan.node_workspace) live_top = std::max(live_top, w);

  TimelineGeometry geo;
  const double legend_h = 48, right = 20, gap = 46;
  geo.x0 = 90;
  geo.step_width = (o.width - geo.x0 - right) / std::max(1, steps + 1);
  geo.y_base = legend_h + o.arena_height;
  geo.bytes_scale = o.arena_height / static_cast<double>(std::max<size_t>(top_bytes, 1));
  const double live_top_y = geo.y_base + gap;
  const double live_base = live_top_y + o.live_height;
  const double live_scale = o.live_height / static_cast<double>(live_top);
  const double height = live_base + 40;
  if (geometry) *geometry = geo;
  auto x_of = [&](int step) { return geo.x0 + (step + 1) * geo.step_width; };

  std::string svg = format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"xopt-timeline\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica,Arial,sans-serif\" "
      "font-size=\"11\" data-x0=\"%.6f\" data-step-width=\"%.9g\" data-y-base=\"%.6f\" "
      "data-bytes-scale=\"%.9g\" data-steps=\"%d\">\n",
      o.width, height, o.width, height, geo.x0, geo.step_width, geo.y_base, geo.bytes_scale, steps);
  svg += "<defs><pattern id=\"" + o.id_prefix +
         "hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\" "
         "fill-opacity=\"0.3\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#333\" "
         "stroke-width=\"1.5\"/></pattern></defs>\n"
         "<style>.value{stroke:#444;stroke-width:0.4}.value:hover{stroke:#000;stroke-width:1.5}"
         ".alias{stroke-dasharray:3 2;stroke-width:1}.hl{stroke:#d00!important;"
         "stroke-width:3!important}</style>\n";
  const std::string title =
      (o.title.empty() ? std::string("memory timeline") : o.title) + ": arena " +
      compact_bytes(plan.arena_bytes) + ", lower bound " + compact_bytes(plan.lower_bound) +
      format(" (ratio %.4f), ", plan.ratio_to_lower_bound()) + std::to_string(plan.values.size()) +
      " planned values, " + std::to_string(steps) + " steps";
  svg += "<text x=\"10\" y=\"16\" font-size=\"13\" font-weight=\"bold\">" + xml_escape(title) +
         "</text>\n";

  // Legend: the families of the values drawn.
  std::set<std::string> used;
  for (const PlannedValue& pv : plan.values) {
    std::string colour;
    used.insert(family_of(pv, g, &colour));
  }
  double lx = 10;
  auto legend_item = [&](const std::string& fill, const std::string& name) {
    svg += format(
        "<rect x=\"%.1f\" y=\"26\" width=\"12\" height=\"12\" fill=\"%s\" "
        "stroke=\"#444\" stroke-width=\"0.5\"/>",
        lx, fill.c_str());
    svg += axis_label(lx + 16, 36, name, "start");
    lx += 28 + 6.2 * static_cast<double>(name.size());
  };
  for (const OpFamily& f : op_families())
    if (used.count(f.name)) legend_item(f.colour, f.name);
  if (used.count(io_family().name)) legend_item(io_family().colour, io_family().name);
  if (used.count(workspace_family().name))
    legend_item(workspace_family().colour, workspace_family().name);
  legend_item("url(#" + o.id_prefix + "hatch)", "alias (view / in-place)");
  svg += "\n";

  // Arena frame and axis.
  svg += format(
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" "
      "stroke=\"#999\"/>\n",
      geo.x0, legend_h, x_of(steps - 1) + geo.step_width - geo.x0, o.arena_height);
  for (int k = 0; k <= 4; ++k) {
    const size_t b = top_bytes * static_cast<size_t>(k) / 4;
    const double y = geo.y_base - static_cast<double>(b) * geo.bytes_scale;
    svg += axis_label(geo.x0 - 4, y + 4, compact_bytes(b), "end");
  }
  svg += format(
      "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">"
      "offset in the arena</text>\n",
      legend_h + o.arena_height / 2);

  // One rectangle per planned value: roots first, aliases on top.
  std::string rects;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < plan.values.size(); ++i) {
      const PlannedValue& pv = plan.values[i];
      const bool alias = !pv.alias_of.empty();
      if (alias != (pass == 1)) continue;
      std::string colour;
      family_of(pv, g, &colour);
      const double x = x_of(pv.first_step);
      const double w = (pv.last_step - pv.first_step + 1) * geo.step_width;
      const double y = geo.y_base - static_cast<double>(pv.offset + pv.size) * geo.bytes_scale;
      const double h = static_cast<double>(pv.size) * geo.bytes_scale;
      const ir::Node* p = producer_of(g, pv.name);
      rects += format(
          "<rect id=\"%sv%zu\" class=\"value%s\" x=\"%.4f\" y=\"%.4f\" "
          "width=\"%.4f\" height=\"%.4f\" fill=\"%s\" data-first=\"%d\" "
          "data-last=\"%d\" data-offset=\"%zu\" data-size=\"%zu\"",
          o.id_prefix.c_str(), i, alias ? " alias" : "", x, y, w, h,
          alias ? ("url(#" + o.id_prefix + "hatch)").c_str() : colour.c_str(), pv.first_step,
          pv.last_step, pv.offset, pv.size);
      rects += " data-value=\"" + xml_escape(pv.name) + "\"";
      if (p) rects += " data-producer=\"" + xml_escape(p->name()) + "\"";
      rects += "><title>" + xml_escape(tooltip(pv, g)) + "</title></rect>\n";
    }
  }
  svg += "<g class=\"values\">\n" + rects + "</g>\n";

  // Live bytes, arena size, lower bound and workspace per step.
  svg += format(
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" "
      "stroke=\"#999\"/>\n",
      geo.x0, live_top_y, x_of(steps - 1) + geo.step_width - geo.x0, o.live_height);
  auto y_live = [&](size_t b) { return live_base - static_cast<double>(b) * live_scale; };
  std::string ws;
  for (int s = 0; s < steps && s < static_cast<int>(plan.node_workspace.size()); ++s) {
    const size_t b = plan.node_workspace[static_cast<size_t>(s)];
    if (b == 0) continue;
    ws += format(
        "<rect class=\"workspace\" x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\">"
        "<title>step %d workspace %s</title></rect>",
        x_of(s), y_live(b), std::max(geo.step_width, 1.0), live_base - y_live(b), s,
        compact_bytes(b).c_str());
  }
  svg += "<g fill=\"#9ecae1\" fill-opacity=\"0.8\">" + ws + "</g>\n";
  std::string points;
  for (int s = -1; s < steps; ++s) {
    const double y = y_live(live[static_cast<size_t>(s) + 1]);
    points += format("%.2f,%.2f %.2f,%.2f ", x_of(s), y, x_of(s) + geo.step_width, y);
  }
  svg +=
      "<polyline class=\"live\" fill=\"none\" stroke=\"#08519c\" stroke-width=\"1.5\" points=\"" +
      points + "\"/>\n";
  auto hline = [&](size_t b, const char* colour, const std::string& label, bool at_right) {
    const double y = y_live(b);
    svg += format(
        "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"%s\" "
        "stroke-dasharray=\"6 3\" stroke-width=\"1.2\"/>",
        geo.x0, y, o.width - right, y, colour);
    svg += format("<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"%s\" fill=\"%s\">",
                  at_right ? o.width - right - 4 : geo.x0 + 4, at_right ? y - 3 : y + 12,
                  at_right ? "end" : "start", colour) +
           xml_escape(label) + "</text>\n";
  };
  hline(plan.arena_bytes, "#cb181d", "arena " + compact_bytes(plan.arena_bytes), true);
  hline(plan.lower_bound, "#238b45", "lower bound " + compact_bytes(plan.lower_bound), false);
  svg += axis_label(geo.x0 - 4, live_base + 4, "0", "end");
  svg += axis_label(geo.x0 - 4, y_live(live_top) + 4, compact_bytes(live_top), "end");
  svg += axis_label(geo.x0, live_top_y - 6, "bytes live per step (line); workspace per step (bars)",
                    "start");
  // Step axis.
  const int every = std::max(1, (steps + 1) / 12);
  for (int s = 0; s < steps; s += every)
    svg += axis_label(x_of(s) + geo.step_width / 2, live_base + 16, std::to_string(s), "middle");
  svg += axis_label(o.width / 2, live_base + 32, "step (node in execution order)", "middle");
  svg += "</svg>\n";
  return svg;
}

Result<std::string> timeline_file(ir::Model& m, const std::string& out_path,
                                  const std::vector<int64_t>& batches) {
  XOPT_ASSIGN_OR_RETURN(planner::MemoryPlan stored, planner::read_plan(m));
  TimelineOptions o;
  const std::string name = std::filesystem::path(m.path).filename().string();
  std::vector<std::string> charts;
  double height = 0, width = o.width;
  if (batches.empty()) {
    o.title = name;
    charts.push_back(timeline_svg(stored, m.graph.get(), o));
  }
  for (int64_t batch : batches) {
    // The same options as the stored plan, at another batch (exporters often fix the batch to
    // 1, so a static leading dim is rebound too).
    XOPT_RETURN_IF_ERROR(planner::rebind_batch(*m.graph, batch, true));
    planner::PlanOptions po;
    po.alignment = stored.alignment;
    po.io_in_arena = stored.io_in_arena;
    po.batch = batch;
    auto plan = planner::plan(*m.graph, po);
    if (!plan.is_ok())
      return plan.status().with_context(name + " at batch " + std::to_string(batch) + ": ");
    o.title = name + " at batch " + std::to_string(batch);
    o.id_prefix = "tl" + std::to_string(batch) + "-";
    charts.push_back(timeline_svg(*plan, m.graph.get(), o));
  }
  if (is_html_path(out_path)) {
    std::string body;
    for (const auto& c : charts) body += "<div>" + c + "</div>\n";
    return html_page("memory timeline", body);
  }
  if (charts.size() == 1) return svg_or_png(out_path, charts[0]);
  // One SVG: the charts stacked (each keeps its own geometry in its data-* attributes).
  std::string stacked;
  for (const auto& c : charts) {
    const double h = std::strtod(c.substr(c.find("height=\"") + 8).c_str(), nullptr);
    stacked += format("<g transform=\"translate(0 %.0f)\">", height) + c + "</g>\n";
    height += h + 10;
  }
  return svg_or_png(out_path, format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                                     "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
                                     width, height, width, height) +
                                  stacked + "</svg>\n");
}

}  // namespace xopt::viz
