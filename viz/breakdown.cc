#include "viz/breakdown.h"

#include "planner/batch.h"
#include "viz/raster.h"

#include <algorithm>
#include <optional>

#include "planner/annotate.h"
#include "planner/offload.h"
#include "planner/shared_arena.h"
#include "viz/format.h"
#include "viz/output.h"

namespace xopt::viz {
namespace {

struct Bucket {
  const char* name;
  const char* colour;
};
// The device segments, left to right; the host segment comes after a gap.
const Bucket kBuckets[] = {{"CUDA context", "#bdbdbd"},        {"parameters", "#6baed6"},
                           {"activations (arena)", "#fd8d3c"}, {"workspace", "#74c476"},
                           {"inputs/outputs", "#fdd0a2"},      {"offload staging", "#9e9ac8"}};
constexpr int kDeviceBuckets = 6;
constexpr int kStagingBucket = 5;

}  // namespace

Result<BreakdownBar> breakdown_bar(const ir::Model& m, const std::string& label) {
  XOPT_ASSIGN_OR_RETURN(planner::MemoryPlan plan, planner::read_plan(m));
  XOPT_ASSIGN_OR_RETURN(auto offload, planner::read_offload(m));
  BreakdownBar bar{label, planner::memory_breakdown(plan, offload ? &*offload : nullptr)};
  if (plan.batch > 0) bar.label += " (batch " + std::to_string(plan.batch) + ")";
  if (bar.breakdown.offloaded > 0) bar.label += " (offload)";
  return bar;
}

Result<std::vector<BreakdownBar>> shared_arena_bars(const std::vector<const ir::Model*>& models) {
  std::optional<planner::SharedArena> group;
  std::vector<planner::MemoryBreakdown> members;
  for (const ir::Model* m : models) {
    XOPT_ASSIGN_OR_RETURN(auto rec, planner::read_shared_arena(*m));
    if (!rec || (group && rec->id != group->id)) return std::vector<BreakdownBar>{};
    group = *rec;
    XOPT_ASSIGN_OR_RETURN(planner::MemoryBreakdown b, planner::memory_breakdown(*m));
    members.push_back(b);
  }
  if (!group || members.size() < 2) return std::vector<BreakdownBar>{};
  return shared_arena_bars(planner::shared_arena_figures_of(*group, members));
}

std::vector<BreakdownBar> shared_arena_bars(const planner::SharedArenaFigures& f) {
  const std::string n = std::to_string(f.members.size());
  return {{"separate (sum of " + n + ")", f.separate},
          {"shared (" + n + " models, one arena)", f.shared}};
}

std::vector<BreakdownBar> shared_arena_bars(const planner::SharedArena& group,
                                            const std::vector<const planner::MemoryPlan*>& plans) {
  return shared_arena_bars(planner::shared_arena_figures(group, plans));
}

Result<std::vector<BreakdownBar>> breakdown_sweep(const ir::Model& m, const std::string& label,
                                                  const std::vector<int64_t>& batches) {
  XOPT_ASSIGN_OR_RETURN(planner::MemoryPlan stored, planner::read_plan(m));
  std::vector<BreakdownBar> bars;
  for (int64_t batch : batches) {
    planner::PlanOptions po;
    po.alignment = stored.alignment;
    po.io_in_arena = stored.io_in_arena;
    po.batch = batch;
    po.cuda_context_bytes = stored.breakdown.cuda_context;
    po.cuda_context_estimated = stored.breakdown.cuda_context_estimated;
    auto plan = planner::plan_at_batch(m, batch, po, /*override_static=*/true);
    if (!plan.is_ok())
      return plan.status().with_context(label + " at batch " + std::to_string(batch) + ": ");
    plan->breakdown.device = stored.breakdown.device;
    BreakdownBar bar{label + " (batch " + std::to_string(batch) + ")",
                     planner::memory_breakdown(*plan)};
    bars.push_back(std::move(bar));
  }
  return bars;
}

std::string breakdown_svg(const std::vector<BreakdownBar>& bars, const std::string& title) {
  const double left = 200, right = 30, bar_h = 30, gap = 22, width = 900;
  size_t most = 1;
  bool any_offload = false;
  for (const auto& b : bars) {
    // The host part of an offloaded bar is drawn after a gap of 12 px.
    most = std::max(most, b.breakdown.total() + b.breakdown.host_total());
    any_offload = any_offload || b.breakdown.has_offload || b.breakdown.staging > 0;
  }
  // The legend's entries, laid out in rows that fit the width; the bars start below them.
  // The context's entries: one for the kind (measured, estimated) some bar shows.
  std::vector<std::pair<std::string, std::string>> entries;
  const auto shows = [&](bool estimated) {
    return std::any_of(bars.begin(), bars.end(), [&](const BreakdownBar& b) {
      return b.breakdown.cuda_context > 0 && b.breakdown.cuda_context_estimated == estimated;
    });
  };
  if (shows(false)) entries.emplace_back(kBuckets[0].colour, "CUDA context (measured)");
  if (shows(true)) entries.emplace_back("url(#bd-hatch)", "CUDA context (estimate)");
  for (int k = 1; k < kStagingBucket; ++k)
    entries.emplace_back(kBuckets[k].colour, kBuckets[k].name);
  if (any_offload) {
    entries.emplace_back(kBuckets[kStagingBucket].colour, kBuckets[kStagingBucket].name);
    entries.emplace_back("url(#bd-host)", "offloaded weights (host)");
  }
  auto entry_width = [](const std::string& name) {
    return 34 + 6.3 * static_cast<double>(name.size());
  };
  std::vector<std::pair<double, double>> at;  // x, y of each entry
  double lx = 10, ly = 30;
  for (const auto& e : entries) {
    if (lx > 10 && lx + entry_width(e.second) > width - 10) lx = 10, ly += 20;
    at.emplace_back(lx, ly);
    lx += entry_width(e.second);
  }
  const double top = ly + 32;
  const double scale = (width - left - right) / static_cast<double>(most);
  const double height = top + static_cast<double>(bars.size()) * (bar_h + gap) + 30;
  std::string svg = format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"xopt-breakdown\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica,Arial,sans-serif\" "
      "font-size=\"11\">\n",
      width, height, width, height);
  svg +=
      "<defs><pattern id=\"bd-hatch\" width=\"7\" height=\"7\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"7\" height=\"7\" fill=\"#e0e0e0\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"7\" stroke=\"#777\" stroke-width=\"2.5\"/>"
      "</pattern><pattern id=\"bd-host\" width=\"7\" height=\"7\" "
      "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(-45)\"><rect width=\"7\" "
      "height=\"7\" fill=\"#dadaeb\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"7\" "
      "stroke=\"#6a51a3\" stroke-width=\"2\"/></pattern></defs>\n";
  svg += "<text x=\"10\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" +
         xml_escape(title.empty() ? std::string("memory breakdown") : title) + "</text>\n";
  for (size_t i = 0; i < entries.size(); ++i)
    svg += format(
               "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\" "
               "stroke=\"#444\" stroke-width=\"0.5\"/><text x=\"%.1f\" y=\"%.1f\">",
               at[i].first, at[i].second, entries[i].first.c_str(), at[i].first + 18,
               at[i].second + 11) +
           xml_escape(entries[i].second) + "</text>";
  svg += "\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const planner::MemoryBreakdown& b = bars[i].breakdown;
    const double y = top + static_cast<double>(i) * (bar_h + gap);
    svg += format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 8, y + bar_h / 2 + 4) +
           xml_escape(bars[i].label) + "</text>";
    const size_t sizes[kDeviceBuckets] = {b.cuda_context, b.parameters, b.activations,
                                          b.workspace,    b.io,         b.staging};
    const bool offloads = b.has_offload || b.staging > 0;
    double x = left;
    for (int k = 0; k < kDeviceBuckets; ++k) {
      if (k == kStagingBucket && !offloads) continue;
      const double w = static_cast<double>(sizes[k]) * scale;
      const bool estimate = k == 0 && b.cuda_context_estimated;
      std::string name = kBuckets[k].name;
      if (k == 0) name += estimate ? " (estimate)" : " (measured)";
      if (k == 1 && b.offloaded > 0) name += " (resident)";
      const std::string id = k == kStagingBucket ? std::string("staging") : std::to_string(k);
      svg += format(
                 "<rect class=\"bucket\" data-bucket=\"%s\" data-bytes=\"%zu\" x=\"%.2f\" "
                 "y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" stroke=\"#444\" "
                 "stroke-width=\"0.5\"%s><title>",
                 id.c_str(), sizes[k], x, y, w, bar_h,
                 estimate ? "url(#bd-hatch)" : kBuckets[k].colour,
                 estimate ? " stroke-dasharray=\"4 2\"" : "") +
             xml_escape(name + ": " + compact_bytes(sizes[k]) + " (" + std::to_string(sizes[k]) +
                        " B)") +
             "</title></rect>";
      if (w > 60)
        svg += format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">",
                      x + w / 2, y + bar_h / 2 + 4) +
               xml_escape(compact_bytes(sizes[k])) + "</text>";
      x += w;
    }
    std::string host_note;
    if (offloads) {
      x += 12;
      const double wh = static_cast<double>(b.offloaded) * scale;
      svg += format(
                 "<rect class=\"bucket\" data-bucket=\"host\" data-bytes=\"%zu\" x=\"%.2f\" "
                 "y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"url(#bd-host)\" "
                 "stroke=\"#444\" stroke-width=\"0.5\"><title>",
                 b.offloaded, x, y, wh, bar_h) +
             xml_escape("offloaded weights, pinned host memory: " + compact_bytes(b.offloaded) +
                        " (" + std::to_string(b.offloaded_weights) + " weights)") +
             "</title></rect>";
      if (wh > 60)
        svg += format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">",
                      x + wh / 2, y + bar_h / 2 + 4) +
               "host " + xml_escape(compact_bytes(b.offloaded)) + "</text>";
      host_note =
          ", staging " + compact_bytes(b.staging) + "; host (pinned) " + compact_bytes(b.offloaded);
    }
    std::string budget;
    if (b.budget > 0)
      budget = std::string(b.device_total() <= b.budget ? " within" : " OVER") + " the budget of " +
               compact_bytes(b.budget);
    svg += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", left, y + bar_h + 12) +
           xml_escape("total " + compact_bytes(b.total()) + " = device " +
                      compact_bytes(b.device_total()) + budget + " + context " +
                      compact_bytes(b.cuda_context) +
                      (b.cuda_context_estimated ? " (estimate)" : " (measured)") + ": parameters " +
                      compact_bytes(b.parameters) + ", activations " +
                      compact_bytes(b.activations) + ", workspace " + compact_bytes(b.workspace) +
                      ", I/O " + compact_bytes(b.io) + host_note) +
           "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

Result<std::string> breakdown_file(const std::vector<BreakdownBar>& bars,
                                   const std::string& out_path) {
  std::string svg = breakdown_svg(bars);
  if (is_html_path(out_path)) return html_page("memory breakdown", svg);
  const auto ends = [&](const char* ext) {
    return out_path.size() >= 4 && out_path.compare(out_path.size() - 4, 4, ext) == 0;
  };
  if (!ends(".svg") && !ends(".png"))
    return invalid_argument(out_path + ": unknown output format (use .svg, .png or .html)");
  return svg_or_png(out_path, std::move(svg));
}

}  // namespace xopt::viz
