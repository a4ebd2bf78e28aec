// The ONNX text path refuses brackets nested deeper than it can parse without exhausting the stack
// (libonnx's parser recurses without a limit), and still parses nested subgraphs within the limit.
#include <gtest/gtest.h>

#include <string>

#include "ir/text.h"

namespace xopt {
namespace {

// `depth` Ifs, each in the then-branch of the one outside it.
std::string nested_if_text(int depth) {
  std::string inner;
  for (int i = 0; i < depth; ++i)
    inner += "y = If (c) <then_branch = t" + std::to_string(i) + " () => (float[2] y) { ";
  inner += "y = Relu(x)";
  for (int i = depth - 1; i >= 0; --i)
    inner += " }, else_branch = e" + std::to_string(i) + " () => (float[2] y) { y = Neg(x) }>";
  return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool c, float[2] x) => (float[2] y) { " +
         inner + " }";
}

TEST(TextNesting, DeepNestingIsRefusedNotACrash) {
  auto m = ir::parse_model_text(nested_if_text(100000));
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("nested deeper than"), std::string::npos)
      << m.status().message();
  auto brackets = ir::parse_model_text(std::string(1000000, '['));
  EXPECT_FALSE(brackets.is_ok());
}

TEST(TextNesting, NestedSubgraphsWithinTheLimitParse) {
  auto m = ir::parse_model_text(nested_if_text(20));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->graph->num_nodes(), 1u);
}

}  // namespace
}  // namespace xopt
