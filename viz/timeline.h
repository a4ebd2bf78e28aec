// The memory timeline: one rectangle per planned value (x: its first..last step, y: its
// offset..offset+size in the arena) coloured by the producing op's family, with a tooltip; below
// it the bytes live at each step against the arena size and the lower bound, and each step's
// workspace. Drawn directly as SVG: it is our own chart, not a graph layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"

namespace xopt::viz {

// The chart's geometry, written on the <svg> element as data-* attributes so that a reader (the
// tests, the report's script) can map coordinates back to steps and bytes:
//   x = x0 + (step + 1) * step_width,  y = y_base - (offset + size) * bytes_scale.
struct TimelineGeometry {
  double x0 = 90;
  double step_width = 0;
  double y_base = 0;
  double bytes_scale = 0;
};

struct TimelineOptions {
  double width = 1200;
  double arena_height = 380;
  double live_height = 150;
  std::string title;
  std::string id_prefix = "tl-";  // rect ids: prefix + "v" + index in plan.values
};

// `g` (may be null) supplies dtype, shape, producer and readers for the tooltips and colours.
std::string timeline_svg(const planner::MemoryPlan& plan, const ir::Graph* g,
                         const TimelineOptions& o = {}, TimelineGeometry* geometry = nullptr);
// The plan stored in `m` drawn as SVG, or as an HTML page when `out_path` ends in .html. With
// `batches`, a sweep: `m` is planned again at each batch (its graph's shapes are rebound) and the
// timelines are drawn one below the other.
Result<std::string> timeline_file(ir::Model& m, const std::string& out_path,
                                  const std::vector<int64_t>& batches = {});

}  // namespace xopt::viz
