#include "viz/precision_marks.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "viz/format.h"

namespace xopt::viz {

namespace {

// passes::precision_node_key: the node's name, or "@" + its first output's name.
std::string node_key(const ir::Node& n) {
  if (!n.name().empty()) return n.name();
  for (const ir::Value* o : n.outputs())
    if (o != nullptr) return "@" + o->name();
  return "@" + n.op_type();
}

nlohmann::json parse(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  return nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
}

void put(std::unordered_map<std::string, NodeMark>& marks, const ir::Node& n,
         const std::string& type, const std::string& why) {
  if (n.name().empty()) return;
  NodeMark m;
  if (type == "float16") {
    m.colour = kFloat16Colour;
  } else if (type == "bfloat16") {
    m.colour = kBFloat16Colour;
  } else {
    return;
  }
  m.note = why.empty() ? type : type + ": " + why;
  if (m.note.size() > 60) m.note = m.note.substr(0, 57) + "...";
  marks[n.name()] = m;
}

}  // namespace

std::unordered_map<std::string, NodeMark> precision_marks(const ir::Model& model) {
  std::unordered_map<std::string, NodeMark> marks;
  const nlohmann::json record = parse(model.metadata("xopt.precision"));
  const nlohmann::json choice = parse(model.metadata("xopt.precision_choice"));
  std::unordered_map<std::string, std::string> reasons;
  if (choice.is_object() && choice.contains("nodes") && choice["nodes"].is_array())
    for (const auto& d : choice["nodes"])
      if (d.is_object() && d.value("node", "") != "")
        reasons[d.value("node", "")] = d.value("reason", "");
  const bool recorded =
      record.is_object() && record.contains("nodes") && record["nodes"].is_object();
  for (const ir::Node* n : model.graph->nodes()) {
    const std::string key = node_key(*n);
    std::string type;
    if (recorded) {
      const auto it = record["nodes"].find(key);
      if (it == record["nodes"].end() || !it->is_object()) continue;
      type = it->value("type", "");
    } else {
      // No record: the type of the node's float outputs, when the model carries them.
      for (const ir::Value* v : n->outputs())
        if (v != nullptr &&
            (v->dtype() == ir::DType::kFloat16 || v->dtype() == ir::DType::kBFloat16))
          type = std::string(ir::dtype_name(v->dtype()));
      if (n->is("Cast")) type.clear();
    }
    std::string why;
    if (auto r = reasons.find(key); r != reasons.end()) {
      why = r->second;
      // "float16: local error 2.4e-04" -> "local error 2.4e-04": the type is said already.
      if (why.rfind(type + ": ", 0) == 0) why = why.substr(type.size() + 2);
    }
    put(marks, *n, type, why);
  }
  return marks;
}

namespace {

std::string figure(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return j.contains(key) ? "inf" : "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", j[key].get<double>());
  return buf;
}

}  // namespace

std::string precision_table_html(const ir::Model& model) {
  const nlohmann::json record = parse(model.metadata("xopt.precision"));
  const nlohmann::json choice = parse(model.metadata("xopt.precision_choice"));
  const bool recorded =
      record.is_object() && record.contains("nodes") && record["nodes"].is_object();
  const bool chosen = choice.is_object() && choice.contains("nodes") && choice["nodes"].is_array();
  if (!recorded && !chosen) return "";
  std::string html = "<h2>Precision</h2>";
  if (recorded) html += "<p>mode " + xml_escape(record.value("mode", std::string("?"))) + "</p>";
  if (chosen) {
    html += "<p>mixed: --max-error " + figure(choice, "max_error") + "; " +
            std::to_string(choice["counts"].value("float16", 0)) + " float16, " +
            std::to_string(choice["counts"].value("bfloat16", 0)) + " bfloat16, " +
            std::to_string(choice["counts"].value("float", 0)) + " fp32 node(s); " +
            std::to_string(choice.value("casts", 0)) + " Cast(s) added</p>";
  }
  html +=
      "<table class=\"precision\"><tr><th>node</th><th>op</th><th>type</th><th>why</th>"
      "<th>max |x|</th><th>headroom</th><th>local error fp16</th><th>local error bf16</th></tr>";
  auto row = [&](const std::string& node, const std::string& op, const std::string& type,
                 const std::string& why, const nlohmann::json& figures) {
    const std::string colour = type == "float16"    ? kFloat16Colour
                               : type == "bfloat16" ? kBFloat16Colour
                                                    : "#555555";
    html += "<tr><td class=\"left\">" + xml_escape(node) + "</td><td>" + xml_escape(op) +
            "</td><td style=\"color:" + colour + "\"><b>" + xml_escape(type) +
            "</b></td><td class=\"left\">" + xml_escape(why) + "</td><td>" +
            figure(figures, "max_abs") + "</td><td>" + figure(figures, "headroom") + "</td><td>" +
            figure(figures, "local_error_fp16") + "</td><td>" +
            figure(figures, "local_error_bf16") + "</td></tr>";
  };
  if (chosen) {
    for (const auto& d : choice["nodes"]) {
      if (!d.is_object()) continue;
      std::string type = d.value("dtype", std::string());
      // The pass has the last word (a schema rule per input may have kept a node in fp32).
      if (recorded) {
        const auto it = record["nodes"].find(d.value("node", std::string()));
        if (it != record["nodes"].end() && it->is_object()) type = it->value("type", type);
      }
      row(d.value("node", std::string()), d.value("op_type", std::string()), type,
          d.value("kind", std::string()) + ": " + d.value("reason", std::string()), d);
    }
  } else {
    std::unordered_map<std::string, std::string> ops;
    for (const ir::Node* n : model.graph->nodes()) ops[node_key(*n)] = n->op_type();
    for (const auto& [key, e] : record["nodes"].items()) {
      if (!e.is_object()) continue;
      const std::string why = e.value("rule", std::string()) +
                              (e.contains("why") ? ": " + e.value("why", std::string()) : "");
      row(key, ops[key], e.value("type", std::string()), why, nlohmann::json::object());
    }
  }
  return html + "</table>";
}

}  // namespace xopt::viz
