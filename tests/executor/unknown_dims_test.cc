// "?", an empty dim_param and a negative dim_value are independent unknown dims: two inputs (or two
// dims of one input) declared that way take different sizes, and nothing binds them together.
#include <gtest/gtest.h>

#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/text.h"

namespace xopt::ir {
namespace {

// x [?, 3, ?, ?] and z [?, ?] written with each form of unknown dim, y = Shape-independent ops.
onnx::ModelProto model_with_unknown_dims(const std::string& form) {
  auto m = parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,H,W] x, float[A,B] z) => (float[N,3,H,W] y, float[A,B] w) {
      y = Relu(x)
      w = Neg(z)
    }
  )");
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  onnx::ModelProto p = model_to_proto(*m);
  for (auto* vi : {p.mutable_graph()->mutable_input(), p.mutable_graph()->mutable_output()})
    for (auto& v : *vi)
      for (auto& d : *v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        if (d.has_dim_value()) continue;
        d.clear_dim_param();
        if (form == "?") d.set_dim_param("?");
        if (form == "empty") d.set_dim_param("");
        if (form == "negative") d.set_dim_value(-1);
      }
  return p;
}

class UnknownDims : public ::testing::TestWithParam<std::string> {};

TEST_P(UnknownDims, AreIndependentOfEachOther) {
  auto m = model_from_proto(model_with_unknown_dims(GetParam()));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const Value* x = m->graph->find_value("x");
  ASSERT_EQ(x->shape().rank(), 4u);
  for (size_t i : {0u, 2u, 3u}) {
    EXPECT_FALSE(x->shape()[i].is_known());
    EXPECT_FALSE(x->shape()[i].is_symbolic()) << "dim " << i << " became a shared symbol";
  }
  // The Paddle2ONNX case: H and W of one input differ, and another input's dims differ again.
  std::map<std::string, Tensor> in = {{"x", Tensor(DType::kFloat, {1, 3, 48, 192})},
                                      {"z", Tensor(DType::kFloat, {5, 7})}};
  auto out = exec::run_model(*m, in);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 3, 48, 192}));
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{5, 7}));
  // Saving keeps the dims as they were written.
  onnx::ModelProto back = model_to_proto(*m);
  const auto& d = back.graph().input(0).type().tensor_type().shape().dim(2);
  if (GetParam() == "?") {
    EXPECT_EQ(d.dim_param(), "?");
  }
  if (GetParam() == "negative") {
    EXPECT_EQ(d.dim_value(), -1);
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, UnknownDims, ::testing::Values("?", "empty", "negative"));

// A named symbol still binds: the same name must be the same size.
TEST(UnknownDims, NamedSymbolsStillBind) {
  auto m = parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,4] a, float[N,4] b) => (float[N,4] y) { y = Add(a, b) }
  )");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  std::map<std::string, Tensor> in = {{"a", Tensor(DType::kFloat, {2, 4})},
                                      {"b", Tensor(DType::kFloat, {3, 4})}};
  auto out = exec::run_model(*m, in);
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("'N'"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace xopt::ir
