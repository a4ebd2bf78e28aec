#include "viz/node_card.h"

#include "viz/format.h"

namespace xopt::viz {
namespace {

std::string join(const std::vector<int64_t>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out;
}

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

// Graphviz HTML-like labels are XML: escape the text.
std::string small(const std::string& text, const char* colour = "#333333") {
  return "<BR/><FONT POINT-SIZE=\"9\" COLOR=\"" + std::string(colour) + "\">" + xml_escape(text) +
         "</FONT>";
}

}  // namespace

std::string key_attributes(const ir::Node& n) {
  std::vector<std::string> parts;
  if (auto k = n.attr_ints("kernel_shape"); !k.empty()) parts.push_back("k" + join(k, "x"));
  if (auto s = n.attr_ints("strides"); !s.empty() && !all_equal(s, 1))
    parts.push_back("s" + (all_equal(s, s[0]) ? std::to_string(s[0]) : join(s, "x")));
  if (auto d = n.attr_ints("dilations"); !d.empty() && !all_equal(d, 1))
    parts.push_back("d" + (all_equal(d, d[0]) ? std::to_string(d[0]) : join(d, "x")));
  if (int64_t g = n.attr_int("group", 1); g != 1) parts.push_back("g" + std::to_string(g));
  if (auto p = n.attr_ints("perm"); !p.empty()) parts.push_back("perm " + join(p, ","));
  if (n.has_attr("axis")) parts.push_back("axis " + std::to_string(n.attr_int("axis", 0)));
  if (auto a = n.attr_ints("axes"); !a.empty()) parts.push_back("axes " + join(a, ","));
  if (n.has_attr("activation")) parts.push_back("act " + n.attr_string("activation", ""));
  if (n.has_attr("num_heads"))
    parts.push_back("heads " + std::to_string(n.attr_int("num_heads", 0)));
  if (n.attr_int("transB", 0)) parts.push_back("transB");
  if (n.has_attr("to"))
    parts.push_back("to " + short_dtype(static_cast<ir::DType>(n.attr_int("to", 0))));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

size_t weight_bytes_of(const ir::Node& n, int* count) {
  size_t bytes = 0;
  int c = 0;
  for (const ir::Value* v : n.inputs()) {
    if (!v) continue;
    const bool constant_node = v->producer() && v->producer()->is("Constant");
    if (!v->is_initializer() && !constant_node) continue;
    ++c;
    bytes += value_bytes(*v);
  }
  if (count) *count = c;
  return bytes;
}

std::string node_card_html(const ir::Node& n, bool weights_folded, bool provenance) {
  std::string html = "<B>" + xml_escape(n.op_type()) + "</B>";
  if (std::string attrs = key_attributes(n); !attrs.empty()) html += small(attrs);
  for (const ir::Value* out : n.outputs()) {
    if (!out) continue;
    html += small(value_summary(*out));
    break;  // the first output; the tooltip lists them all
  }
  if (weights_folded) {
    int count = 0;
    if (size_t bytes = weight_bytes_of(n, &count); count > 0 && bytes > 0)
      html += small("weights " + compact_bytes(bytes), "#666666");
  }
  if (provenance && n.provenance().size() > 1)
    html += small("fused: replaces " + std::to_string(n.provenance().size()) + " nodes", "#7a0177");
  return html;
}

std::string node_tooltip(const ir::Node& n) {
  std::string t = n.name().empty() ? n.op_type() : n.name() + " (" + n.op_type() + ")";
  if (n.provenance().size() > 1) {
    t += "\nreplaces:";
    for (const auto& p : n.provenance()) t += "\n  " + p;
  }
  for (const ir::Value* out : n.outputs())
    if (out) t += "\n-> " + out->name() + "  " + value_summary(*out);
  return t;
}

}  // namespace xopt::viz
