// Reading models for drawing and writing what was drawn.
#pragma once

#include <string>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"

namespace xopt::viz {

// Loads a model, puts it in topological order and infers shapes (bound by `bindings` where the
// plan needs a batch). A graph whose shapes cannot all be inferred still draws: unknown shapes
// show as '?'.
Result<ir::Model> load_for_drawing(const std::string& path, const ir::ShapeBindings& bindings = {});
// Writes `data` to `path` atomically (temporary file + rename).
Status write_file(const std::string& path, const std::string& data);
// True when `path` ends in .html or .htm.
bool is_html_path(const std::string& path);
// An SVG document without its XML prolog and DOCTYPE, for inlining into HTML.
std::string svg_fragment(const std::string& svg);
// A minimal self-contained HTML page around `body` (no network).
std::string html_page(const std::string& title, const std::string& body);

}  // namespace xopt::viz
