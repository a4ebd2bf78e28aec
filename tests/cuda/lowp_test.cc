// float16 and bfloat16 on the GPU: what the float32 text cases (which every kernel test also runs
// in both types, tests/cuda/cuda_test_util.h) cannot say. Cast among float32, float16, bfloat16 and
// the integer types; the claim table; the half-precision attention that only the fused kernel
// runs; and a small model chain (MatMul, LayerNorm, Softmax, Gelu) as the converted models have it.
#include <gtest/gtest.h>

#include <string>

#include "executor/cpu/session.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/planner.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/lowp_test_util.h"

namespace xopt {
namespace {

using test::CudaCase;
using test::expect_cuda_lowp_matches_cpu;

// A case whose types are written out: run as it is (no rewrite into the half types).
void typed(const std::string& text, const CudaCase& c) {
  test::expect_cuda_matches_cpu_fp32_only(text, c, "the element types are written out");
}
using test::LowpType;

std::string model(const std::string& inputs, const std::string& outputs, const std::string& body,
                  int opset = 17) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         ", \"com.microsoft\" : 1]>\ng (" + inputs + ") => (" + outputs + ") {\n  " + body + "\n}";
}

class CudaLowp : public ::testing::TestWithParam<LowpType> {
 protected:
  std::string type() const { return std::string(ir::dtype_name(GetParam().dtype)); }
  int onnx_type() const { return static_cast<int>(GetParam().dtype); }
};

// Cast between the type and float32, the other half type, int32, int64 and bool, both ways: the
// CPU and the GPU round to nearest even the same way, so the results are equal.
TEST_P(CudaLowp, CastBothWays) {
  CudaCase exact;
  exact.rtol = 0;
  exact.atol = 0;
  const std::string t = type();
  const std::string other = GetParam().dtype == ir::DType::kFloat16 ? "bfloat16" : "float16";
  const int other_id = GetParam().dtype == ir::DType::kFloat16 ? 16 : 10;
  // float32 -> t -> float32 and t -> float32 (odd count: the scalar tail).
  typed(model("float[3,37] x", t + "[3,37] y",
              "y = Cast <to = " + std::to_string(onnx_type()) + "> (x)"),
        exact);
  typed(model(t + "[3,37] x", "float[3,37] y", "y = Cast <to = 1> (x)"), exact);
  typed(
      model(t + "[64] x", other + "[64] y", "y = Cast <to = " + std::to_string(other_id) + "> (x)"),
      exact);
  for (const char* to : {"6", "7", "9"}) {  // int32, int64, bool
    const std::string out = std::string(to) == "6"   ? "int32"
                            : std::string(to) == "7" ? "int64"
                                                     : "bool";
    typed(model(t + "[40] x", out + "[40] y", std::string("y = Cast <to = ") + to + "> (x)"),
          exact);
    typed(model(out + "[40] x", t + "[40] y",
                "y = Cast <to = " + std::to_string(onnx_type()) + "> (x)"),
          exact);
  }
  // CastLike takes the type from its second input.
  typed(model("float[16] x, " + t + "[1] like", t + "[16] y", "y = CastLike (x, like)"), exact);
}

// The boundary Casts of a converted model around a chain that runs in the type.
TEST_P(CudaLowp, CastChainAsConverted) {
  const std::string id = std::to_string(onnx_type());
  const std::string t = type();
  test::LowpCase c;
  c.ulps = 8;
  c.fp32_ulps = 16;
  CudaCase cc;
  cc.rtol = 16 * GetParam().eps;
  cc.atol = 1e-3 * GetParam().eps;
  typed(model("float[2,8,32] x, " + t + "[32,32] w, " + t + "[32] g, " + t + "[32] b",
              "float[2,8,32] y",
              "h = Cast <to = " + id +
                  "> (x)\n  m = MatMul (h, w)\n  n = LayerNormalization (m, g, "
                  "b)\n  s = Softmax (n)\n  a = Gelu (s)\n  y = Cast <to = 1> (a)",
              20),
        cc);
}

// The rewrite every text case runs through: tensor types only (graph signature, initializers,
// scalars), never attributes, other words or types already low.
TEST(CudaLowpText, RewritesTensorTypesOnly) {
  EXPECT_EQ(test::lowp_text("g (float[2,3] x, float s) => (float[2,3] y) <float[2] w = {1, 2}>",
                            ir::DType::kFloat16),
            "g (float16[2,3] x, float16 s) => (float16[2,3] y) <float16[2] w = {1, 2}>");
  EXPECT_EQ(test::lowp_text("y = Cast <to = 1, value_float = 0.5> (x), float16[2] a, floats",
                            ir::DType::kBFloat16),
            "y = Cast <to = 1, value_float = 0.5> (x), float16[2] a, floats");
  EXPECT_EQ(test::lowp_text("(int64[4] i,float[4] f)", ir::DType::kBFloat16),
            "(int64[4] i,bfloat16[4] f)");
}

// Every op the GPU claims for float32 claims float16 and bfloat16 too (the table `xopt --list-ops
// --device cuda` prints); this runs on the CPU: it reads the registry.
TEST(CudaLowpClaims, EveryFloatKernelClaimsTheHalfTypes) {
  int float_kernels = 0;
  for (const cuda::KernelDef& k : cuda::KernelRegistry::global().all()) {
    if (k.types.find("float32") == std::string::npos) continue;
    ++float_kernels;
    EXPECT_NE(k.types.find("float16"), std::string::npos) << k.op_type << ": " << k.types;
    EXPECT_NE(k.types.find("bfloat16"), std::string::npos) << k.op_type << ": " << k.types;
  }
  EXPECT_GT(float_kernels, 80);
}

// Half-precision attention runs on the fused kernel: head sizes up to 128 with masks and biases;
// present outputs or wider heads are refused with an error naming the node (checked on the GPU).
TEST_P(CudaLowp, FusedAttentionForms) {
  const std::string t = type();
  const std::string qkv = "float[2,7,32] q, float[2,9,32] k, float[2,9,32] v";
  test::LowpCase c;
  for (const std::string& node :
       {std::string("y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"),
        std::string("y = com.microsoft.MultiHeadAttention <num_heads = 4, unidirectional = 1> "
                    "(q, k, v, bias, , ab)")}) {
    SCOPED_TRACE(node);
    expect_cuda_lowp_matches_cpu(
        model(qkv + ", float[96] bias, float[2,1,7,9] ab", "float[2,7,32] y", node), GetParam(), c);
  }
}

// What only the unfused path runs (present outputs, heads above 128) is refused in the half types
// with an error naming the node and the reason; the CPU twin runs it (the expectation stands).
TEST_P(CudaLowp, UnfusedAttentionIsRefused) {
  const std::string text =
      test::lowp_text(model("float[2,6,16] q, float[2,6,16] k, float[2,6,16] v",
                            "float[2,6,16] y, float[2,2,6,8] pk",
                            "y, pk = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"),
                      GetParam().dtype);
  auto m = ir::parse_model_text(text);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  ASSERT_TRUE(ir::infer_shapes(*m->graph).is_ok());
  auto plan = planner::plan(*m->graph);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  auto cpu = exec::run_model(*m, test::random_inputs_any_float(*m->graph));
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  std::string why;
  if (!cuda::device_available(&why)) GTEST_SKIP() << "GPU half skipped: " << why;
  auto s = cuda::Session::create(*m, *plan, cuda::SessionOptions{});
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("fused kernel only"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("MultiHeadAttention"), std::string::npos)
      << s.status().message();
}

INSTANTIATE_TEST_SUITE_P(Lowp, CudaLowp, test::kLowpTypes, test::lowp_type_name);

}  // namespace
}  // namespace xopt
