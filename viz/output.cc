#include "viz/output.h"

#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "ir/onnx_io.h"
#include "viz/format.h"

namespace xopt::viz {

Result<ir::Model> load_for_drawing(const std::string& path, const ir::ShapeBindings& bindings) {
  XOPT_ASSIGN_OR_RETURN(ir::Model m, ir::load_model(path));
  std::string cycle;
  if (!m.graph->topo_sort(&cycle)) return invalid_model(path + ": " + cycle);
  if (bindings.batch || !bindings.input_shapes.empty()) {
    Status st = ir::bind_input_shapes(*m.graph, bindings);
    if (!st.is_ok()) return st.with_context(path + ": ");
  }
  // Drawing needs no complete shapes: where inference gives up, the cards say '?'.
  (void)ir::infer_shapes(*m.graph);
  return m;
}

Status write_file(const std::string& path, const std::string& data) {
  return write_file_atomically(path, data);
}

bool is_html_path(const std::string& path) {
  auto ends = [&](const char* s) {
    const std::string e(s);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".html") || ends(".htm");
}

std::string svg_fragment(const std::string& svg) {
  const size_t at = svg.find("<svg");
  return at == std::string::npos ? svg : svg.substr(at);
}

std::string html_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         xml_escape(title) +
         "</title><style>body{font-family:Helvetica,Arial,sans-serif;margin:16px;color:#222}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;"
         "text-align:right}th{background:#f0f0f0}td:first-child{text-align:left}</style>"
         "</head><body>\n" +
         body + "\n</body></html>\n";
}

}  // namespace xopt::viz
