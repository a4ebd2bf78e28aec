// `xviz graph` marks and the report's precision table, from the metadata convert-precision and
// the mixed chooser write.
#include <gtest/gtest.h>

#include "tests/precision/precision_test_util.h"
#include "viz/precision_marks.h"

namespace xopt {
namespace {

constexpr const char* kTwo = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  a = Relu(x)
  y = Neg(a)
}
)";

TEST(PrecisionView, MarksFollowThePassRecordAndTheChoice) {
  ir::Model m = test::parse(kTwo);
  for (ir::Node* n : m.graph->node_list())
    n->set_name(n->output(0)->name() == "a" ? "relu" : "neg");
  EXPECT_TRUE(viz::precision_marks(m).empty());  // fp32 model: nothing marked
  EXPECT_EQ(viz::precision_table_html(m), "");
  m.set_metadata("xopt.precision",
                 R"({"version":1,"mode":"mixed","nodes":{"relu":{"type":"float16","rule":"free"},)"
                 R"("neg":{"type":"float","rule":"choice"}}})");
  m.set_metadata("xopt.precision_choice",
                 R"({"max_error":0.001,"counts":{"float16":1,"bfloat16":0,"float":1},"casts":2,)"
                 R"("nodes":[{"node":"relu","op_type":"Relu","dtype":"float16","kind":"chosen",)"
                 R"("reason":"float16: local error 2.4e-04","max_abs":1.0,"headroom":65504.0,)"
                 R"("local_error_fp16":0.00024,"local_error_bf16":0.002},)"
                 R"({"node":"neg","op_type":"Neg","dtype":"float","kind":"cast-cost",)"
                 R"("reason":"casts cost more","max_abs":1.0,"headroom":3.4e38,)"
                 R"("local_error_fp16":0.00024,"local_error_bf16":null}]})");
  auto marks = viz::precision_marks(m);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks.at("relu").colour, viz::kFloat16Colour);
  EXPECT_EQ(marks.at("relu").note, "float16: local error 2.4e-04");
  const std::string html = viz::precision_table_html(m);
  EXPECT_NE(html.find("<h2>Precision</h2>"), std::string::npos);
  EXPECT_NE(html.find("cast-cost: casts cost more"), std::string::npos) << html;
  EXPECT_NE(html.find("0.00024"), std::string::npos) << html;
  EXPECT_NE(html.find(">inf<"), std::string::npos) << "a null local error reads inf: " << html;
  EXPECT_NE(html.find("1 float16, 0 bfloat16, 1 fp32"), std::string::npos) << html;
}

TEST(PrecisionView, WithoutMetadataTheOutputTypesSay) {
  ir::Model m = test::parse(kTwo);
  for (ir::Node* n : m.graph->node_list()) n->set_name(n->output(0)->name());
  m.graph->find_value("a")->set_dtype(ir::DType::kBFloat16);
  auto marks = viz::precision_marks(m);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks.at("a").colour, viz::kBFloat16Colour);
  EXPECT_EQ(marks.at("a").note, "bfloat16");
}

}  // namespace
}  // namespace xopt
