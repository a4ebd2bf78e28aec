// fold,fuse on the shared transformer models: the outputs stay those of the original model (CPU
// executor, rtol 1e-4), no shape arithmetic is left, and every LayerNorm, GELU and attention block
// is fused. Prints node counts before -> after and the fusion counters.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "executor/cpu/compare.h"
#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "onnx/checker.h"
#include "passes/pass_manager.h"
#include "tests/fusion_xfmr/xfmr_test_util.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

using test::count;
using test::op_counts;

namespace fs = std::filesystem;

size_t initializer_bytes(const ir::Graph& g) {
  size_t n = 0;
  for (const ir::Value* v : g.initializers()) n += v->initializer()->nbytes();
  return n;
}

int64_t counter(const passes::PipelineStats& s, const char* pass, const char* name) {
  const passes::PassStats* p = s.find(pass);
  if (p == nullptr) return 0;
  auto it = p->counters.find(name);
  return it == p->counters.end() ? 0 : it->second;
}

void check_model(const std::string& name) {
  const std::string path = test::shared_model_path(name);
  auto original = ir::load_model(path);
  ASSERT_TRUE(original.is_ok()) << original.status().message();
  auto model = ir::load_model(path);
  ASSERT_TRUE(model.is_ok());
  const fs::path data = fs::path(path).parent_path() / "test_data_set_0";
  auto in = exec::conformance::read_tensor_file((data / "input_0.pb").string());
  auto torch_out = exec::conformance::read_tensor_file((data / "output_0.pb").string());
  ASSERT_TRUE(in.is_ok() && torch_out.is_ok());

  // What the original graph holds: attention blocks (one Softmax each), GELUs (one Erf each) and
  // LayerNormalizations, of which those reading an Add can become SkipLayerNormalization.
  const auto before = op_counts(*original->graph);
  int ln_after_add = 0;
  for (const ir::Node* n : original->graph->nodes())
    if (n->is("LayerNormalization") && n->input(0)->producer() != nullptr &&
        n->input(0)->producer()->is("Add"))
      ++ln_after_add;

  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(options);
  ASSERT_TRUE(pm.add_pipeline("fold,fuse").is_ok());
  passes::PassContext ctx;
  passes::PipelineStats stats;
  auto t0 = std::chrono::steady_clock::now();
  Status s = pm.run(*model, ctx, &stats);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(s.is_ok()) << s.message();
  const auto after = op_counts(*model->graph);

  std::printf("%s: fold,fuse %zu -> %zu nodes in %.3f s (verify after every pass)\n", name.c_str(),
              original->graph->num_nodes(), model->graph->num_nodes(), secs);
  std::printf(
      "  fused: MultiHeadAttention %lld (causal %lld), Gelu %lld, BiasGelu %lld, "
      "LayerNormalization %lld, SkipLayerNormalization %lld (bias %lld, sum output %lld)\n",
      static_cast<long long>(counter(stats, "fuse-attention", "MultiHeadAttention")),
      static_cast<long long>(counter(stats, "fuse-attention", "causal")),
      static_cast<long long>(counter(stats, "fuse-gelu", "Gelu")),
      static_cast<long long>(counter(stats, "fuse-gelu", "BiasGelu")),
      static_cast<long long>(counter(stats, "fuse-layernorm", "LayerNormalization")),
      static_cast<long long>(counter(stats, "fuse-skip-layernorm", "SkipLayerNormalization")),
      static_cast<long long>(counter(stats, "fuse-skip-layernorm", "bias")),
      static_cast<long long>(counter(stats, "fuse-skip-layernorm", "sum-output")));
  // Weights one layer shares with another stay shared after slicing/transposing: no growth.
  const size_t bytes_before = initializer_bytes(*original->graph);
  const size_t bytes_after = initializer_bytes(*model->graph);
  std::printf("  initializers: %zu -> %zu, %zu -> %zu bytes\n",
              original->graph->initializers().size(), model->graph->initializers().size(),
              bytes_before, bytes_after);
  EXPECT_LE(bytes_after, bytes_before);
  std::string ops;
  for (const auto& [op, n] : after) ops += " " + op + "=" + std::to_string(n);
  std::printf("  ops after:%s\n", ops.c_str());

  // No shape arithmetic left.
  for (const char* op :
       {"Shape", "Size", "Constant", "Unsqueeze", "Squeeze", "Concat", "Cast", "Identity", "Slice"})
    EXPECT_EQ(count(after, op), 0) << op << " nodes remain";
  for (const ir::Node* n : model->graph->nodes()) {
    if (n->is("Reshape") || n->is("Expand")) {
      EXPECT_TRUE(n->input(1)->is_constant()) << n->describe() << " has a computed shape";
    }
    if (n->is("Gather")) {
      EXPECT_TRUE(ir::is_float(n->input(0)->dtype())) << n->describe() << " gathers shape data";
    }
  }
  // Every attention block, GELU and LayerNorm fused.
  EXPECT_EQ(count(after, "Softmax"), 0);
  EXPECT_EQ(count(after, "Erf"), 0);
  EXPECT_EQ(count(after, "com.microsoft.MultiHeadAttention"), count(before, "Softmax"));
  EXPECT_EQ(count(after, "com.microsoft.BiasGelu") + count(after, "com.microsoft.Gelu"),
            count(before, "Erf"));
  EXPECT_EQ(count(after, "com.microsoft.SkipLayerNormalization"), ln_after_add);
  EXPECT_EQ(
      count(after, "LayerNormalization") + count(after, "com.microsoft.SkipLayerNormalization"),
      count(before, "LayerNormalization"));

  // Every node is named, the ones the fusions made too, and each projection of an attention block
  // sits in the block's scope (errors name it; diagrams draw it inside the layer's cluster).
  for (const ir::Node* n : model->graph->nodes()) {
    EXPECT_FALSE(n->name().empty()) << n->describe() << " has no name";
    if (n->op_type() != "MultiHeadAttention" || n->domain() != "com.microsoft") continue;
    const std::string scope = n->name().substr(0, n->name().rfind('/') + 1);
    for (const ir::Value* in : n->inputs())
      if (in != nullptr && in->producer() != nullptr && in->producer()->is("MatMul")) {
        EXPECT_EQ(in->producer()->name().rfind(scope, 0), 0u)
            << in->producer()->describe() << " is outside " << scope;
      }
  }

  // Still ONNX: the checker accepts the optimized model (com.microsoft ops included).
  onnx::ModelProto proto = ir::model_to_proto(*model);
  try {
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "ONNX checker: " << e.what();
  }

  // Same outputs as the original model, and as PyTorch.
  std::map<std::string, ir::Tensor> inputs = {
      {original->graph->runtime_inputs().at(0)->name(), *in}};
  auto want = exec::run_model(*original, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  auto got = exec::run_model(*model, inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(test::output_difference((*got)[0], (*want)[0], {}, "vs original"), "");
  EXPECT_EQ(test::output_difference((*got)[0], *torch_out, {}, "vs PyTorch"), "");
  EXPECT_EQ(test::uncaught_mutations((*got)[0], (*want)[0]), "");
  const exec::TensorDiff vs_original = exec::compare_tensors("y", (*got)[0], (*want)[0]);
  const exec::TensorDiff vs_torch = exec::compare_tensors("y", (*got)[0], *torch_out);
  std::printf(
      "  vs original: max abs diff %.3g, max rel diff %.3g, cosine %.9f; vs PyTorch: %.3g, %.3g, "
      "%.9f (rel = max|a-b| / max|ref|)\n",
      vs_original.max_abs, vs_original.max_rel, vs_original.cosine, vs_torch.max_abs,
      vs_torch.max_rel, vs_torch.cosine);
}

TEST(FusionXfmrModels, BertMini) {
  XOPT_REQUIRE_SHARED(shared);
  check_model("bert_mini");
}

TEST(FusionXfmrModels, GptNano) {
  XOPT_REQUIRE_SHARED(shared);
  check_model("gpt_nano");
}

// Every MultiHeadAttention of the causal decoder is unidirectional, none of the encoder's.
TEST(FusionXfmrModels, CausalOnlyInTheDecoder) {
  XOPT_REQUIRE_SHARED(shared);
  for (const char* name : {"bert_mini", "gpt_nano"}) {
    auto model = ir::load_model(test::shared_model_path(name));
    ASSERT_TRUE(model.is_ok());
    passes::PassManager pm;
    ASSERT_TRUE(pm.add_pipeline("fold,fuse").is_ok());
    passes::PassContext ctx;
    ASSERT_TRUE(pm.run(*model, ctx).is_ok());
    int mha = 0, causal = 0;
    for (const ir::Node* n : model->graph->nodes()) {
      if (n->op_type() != "MultiHeadAttention") continue;
      ++mha;
      causal += n->attr_int("unidirectional", 0) != 0;
      EXPECT_EQ(n->input(5), nullptr) << name << ": no attention_bias expected";
    }
    EXPECT_GT(mha, 0) << name;
    EXPECT_EQ(causal, std::string(name) == "gpt_nano" ? mha : 0) << name;
  }
}

}  // namespace
}  // namespace xopt
