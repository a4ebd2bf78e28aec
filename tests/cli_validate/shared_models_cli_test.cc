// xopt validate and --validate on the shared models: stored PyTorch outputs, random ids for the
// transformer inputs, and an optimized model checked against its original in one run.
#include <filesystem>

#include "tests/cli/cli_util.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

TEST(CliValidateShared, Resnet18AgainstPyTorchOutputs) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string model = test::shared_model_path("resnet18");
  auto r = test::run_xopt({"validate", model});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("test_data_set_0: " + model + " [simple] against the stored outputs"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("float[1,1000]"), std::string::npos) << r.out;
  std::printf("%s", r.out.c_str());
}

TEST(CliValidateShared, BertMiniRandomIdsInsideTheVocabulary) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string model = test::shared_model_path("bert_mini");
  auto r = test::run_xopt({"validate", model, model, "--random-inputs", "--seed", "3"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("input input_ids: int64[1,128] random 0..8191 ("), std::string::npos)
      << r.out;
}

// The optimizer's passes, checked by the executor: original vs optimized on PyTorch's inputs, the
// optimized model run inside the memory plan it carries (or in simple mode with --no-plan).
TEST(CliValidateShared, OptimizeWithValidate) {
  XOPT_REQUIRE_SHARED(shared);
  test::TempDir dir;
  for (const std::string name : {"resnet18", "bert_mini"}) {
    SCOPED_TRACE(name);
    const std::string model = test::shared_model_path(name);
    const std::string out = dir / (name + ".opt.onnx");
    auto r =
        test::run_xopt({"--passes=cleanup,fold,fuse,plan", "--validate", model, "-o", out, "-q"});
    EXPECT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation passed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(out + " (optimized) [arena (its memory plan, "), std::string::npos)
        << r.out;
    EXPECT_TRUE(fs::exists(out));
    std::printf("%s", r.out.c_str());
    auto simple = test::run_xopt({"validate", model, out, "--no-plan"});
    EXPECT_EQ(simple.code, 0) << simple.err << simple.out;
    EXPECT_NE(simple.out.find(out + " [simple] against " + model + " [simple]"), std::string::npos)
        << simple.out;
  }
}

// With no tolerance at all, folding BatchNormalization into Conv (after cleanup removes the
// exporter's Identity aliases of the weights) changes the rounding: the run
// reports the mismatch and exits 1, and the output is still written.
TEST(CliValidateShared, MismatchStillWritesTheOutput) {
  XOPT_REQUIRE_SHARED(shared);
  test::TempDir dir;
  const std::string out = dir / "r.onnx";
  auto r = test::run_xopt({"--passes=cleanup,fuse-conv-bn", "--validate",
                           test::shared_model_path("resnet18"), "-o", out, "-q", "--rtol", "0",
                           "--atol", "0"});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("validation failed"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(out)) << "the optimized model is kept for inspection";
}

}  // namespace
}  // namespace xopt
