// SVG -> PNG for the charts we draw ourselves (timeline, breakdown), through librsvg and cairo;
// graphs get PNG from Graphviz's own renderer.
#pragma once

#include <string>

#include "common/status.h"

namespace xopt::viz {

// True when this build has librsvg (PNG output of the timeline and breakdown charts).
bool can_rasterize();
// The PNG bytes of `svg`, rendered at its own width and height (`scale` times).
Result<std::string> svg_to_png(const std::string& svg, double scale = 1.0);
// `svg` itself, or its PNG when `out_path` ends in .png.
Result<std::string> svg_or_png(const std::string& out_path, std::string svg);

}  // namespace xopt::viz
