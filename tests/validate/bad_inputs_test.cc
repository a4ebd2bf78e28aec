// Bad input to a validation run: each a clear error naming the input or node, never a crash.
#include <gtest/gtest.h>

#include "executor/cpu/validate.h"
#include "ir/text.h"

namespace xopt::exec {
namespace {

ir::Model parse(const std::string& text) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  m->path = "m.onnx";
  return std::move(*m);
}

constexpr const char* kAdd = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,3] a, float[2,3] b) => (float[2,3] y) { y = Add(a, b) })";

std::map<std::string, ir::Tensor> feeds(ir::Tensor a, ir::Tensor b) {
  return {{"a", std::move(a)}, {"b", std::move(b)}};
}

ir::Tensor f23() {
  return ir::Tensor(ir::DType::kFloat, {2, 3});
}

TEST(BadInputs, GoodRunFirst) {
  ir::Model m = parse(kAdd);
  auto r = run_for_validation(m, feeds(f23(), f23()));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->names, std::vector<std::string>{"y"});
  EXPECT_EQ(r->mode, "simple");
}

TEST(BadInputs, MissingInputIsNamed) {
  ir::Model m = parse(kAdd);
  auto r = run_for_validation(m, {{"a", f23()}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("m.onnx: "), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("input 'b' is not given"), std::string::npos)
      << r.status().message();
}

TEST(BadInputs, WrongShapeIsNamed) {
  ir::Model m = parse(kAdd);
  auto r = run_for_validation(m, feeds(f23(), ir::Tensor(ir::DType::kFloat, {3, 2})));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("input 'b' has shape [3,2]"), std::string::npos)
      << r.status().message();
}

TEST(BadInputs, WrongDtypeIsNamed) {
  ir::Model m = parse(kAdd);
  auto r = run_for_validation(m, feeds(ir::Tensor(ir::DType::kInt64, {2, 3}), f23()));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("input 'a' is int64 but the graph declares float"),
            std::string::npos)
      << r.status().message();
}

TEST(BadInputs, InputsTheModelDoesNotDeclareAreLeftOut) {
  // A's inputs feed a B that no longer declares one of them (cleanup removed it).
  ir::Model m = parse(kAdd);
  auto f = feeds(f23(), f23());
  f["gone"] = f23();
  EXPECT_TRUE(run_for_validation(m, f).is_ok());
}

TEST(BadInputs, OpWithoutKernelNamesTheNode) {
  ir::Model m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17, "ai.custom" : 1]>
    g (float[2] x) => (float[2] y) {
      t = Relu(x)
      y = ai.custom.Frobnicate(t)
    })");
  auto r = run_for_validation(m, {{"x", ir::Tensor(ir::DType::kFloat, {2})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().message().find("Frobnicate"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("no CPU kernel"), std::string::npos) << r.status().message();
}

TEST(BadInputs, KernelErrorsNameTheNode) {
  // Shapes agree with the declaration but not with each other at run time (N is symbolic).
  ir::Model m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N] a, float[M] b) => (float[K] y) { y = Add(a, b) })");
  auto r = run_for_validation(
      m, {{"a", ir::Tensor(ir::DType::kFloat, {2})}, {"b", ir::Tensor(ir::DType::kFloat, {3})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("Add"), std::string::npos) << r.status().message();
}

TEST(BadInputs, UnreadablePlanIsAnError) {
  ir::Model m = parse(kAdd);
  m.set_metadata("xopt.memory_plan", "{not json");
  auto r = run_for_validation(m, feeds(f23(), f23()));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("m.onnx"), std::string::npos) << r.status().message();
  ValidateOptions simple;
  simple.use_plan = false;
  EXPECT_TRUE(run_for_validation(m, feeds(f23(), f23()), simple).is_ok());
}

}  // namespace
}  // namespace xopt::exec
