// Helpers of the viz tests: optimize a model in memory, and query SVG / HTML through libxml2.
#pragma once

#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass_manager.h"
#include "planner/memory_plan.h"
#include "viz/output.h"

namespace xopt::test {

struct Optimized {
  ir::Model model;
  std::optional<planner::MemoryPlan> plan;
  std::string stats_json;
};

// Loads `path` (shapes bound to `batch`) and runs `pipeline` in memory: nodes keep provenance.
inline Optimized optimize(const std::string& path, const std::string& pipeline, int64_t batch = 1) {
  ir::ShapeBindings b;
  b.batch = batch;
  auto m = viz::load_for_drawing(path, b);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  Optimized out{std::move(*m), std::nullopt, ""};
  passes::PassOptions options;
  options.shape_bindings = b;
  options.plan_batch = batch;
  passes::PassContext ctx(options);
  ctx.mark_shapes_valid();
  passes::PassManager pm;
  EXPECT_TRUE(pm.add_pipeline(pipeline).is_ok());
  passes::PipelineStats stats;
  Status st = pm.run(out.model, ctx, &stats);
  EXPECT_TRUE(st.is_ok()) << st.message();
  if (ctx.plan_outcome()) out.plan = ctx.plan_outcome()->plan;
  out.stats_json = passes::stats_to_json(stats).dump();
  return out;
}

// An XML document (SVG) queried with XPath; the SVG namespace is bound to "svg".
class Xml {
 public:
  explicit Xml(const std::string& text) {
    doc_ =
        xmlReadMemory(text.data(), static_cast<int>(text.size()), "drawing.svg", nullptr,
                      XML_PARSE_NONET | XML_PARSE_HUGE | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc_) {
      ctx_ = xmlXPathNewContext(doc_);
      xmlXPathRegisterNs(ctx_, BAD_CAST "svg", BAD_CAST "http://www.w3.org/2000/svg");
    }
  }
  ~Xml() {
    if (ctx_) xmlXPathFreeContext(ctx_);
    if (doc_) xmlFreeDoc(doc_);
  }
  Xml(const Xml&) = delete;
  Xml& operator=(const Xml&) = delete;
  bool ok() const { return doc_ != nullptr; }

  std::vector<xmlNodePtr> select(const std::string& xpath) const {
    std::vector<xmlNodePtr> out;
    if (!ctx_) return out;
    xmlXPathObjectPtr r = xmlXPathEvalExpression(BAD_CAST xpath.c_str(), ctx_);
    if (r && r->nodesetval)
      for (int i = 0; i < r->nodesetval->nodeNr; ++i) out.push_back(r->nodesetval->nodeTab[i]);
    if (r) xmlXPathFreeObject(r);
    return out;
  }
  static std::string attr(xmlNodePtr n, const char* name) {
    xmlChar* v = xmlGetProp(n, BAD_CAST name);
    std::string s = v ? reinterpret_cast<const char*>(v) : "";
    xmlFree(v);
    return s;
  }
  static std::string text(xmlNodePtr n) {
    xmlChar* v = xmlNodeGetContent(n);
    std::string s = v ? reinterpret_cast<const char*>(v) : "";
    xmlFree(v);
    return s;
  }

 private:
  xmlDocPtr doc_ = nullptr;
  xmlXPathContextPtr ctx_ = nullptr;
};

}  // namespace xopt::test
