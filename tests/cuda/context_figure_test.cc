// The CUDA context's figure: measured by the session that creates the process's context, reported
// by every later session as that figure, and marked as not measured when the context existed
// before any xopt session (another library made it). The CPU twin states the rules; the GPU half
// runs each case in a fresh process (a death-test child), where no context exists yet.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "executor/cuda/context_figure.h"
#include "executor/cuda/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/planner.h"
#include "tests/cuda/cuda_test_util.h"

namespace xopt::cuda {
namespace {

TEST(CudaContextFigure, RulesOnTheCpu) {
  const std::string how = "measured (NVML, other processes excluded)";
  // The session that makes the context measures it.
  ContextFigure made = context_figure(false, std::nullopt, 536u << 20, how);
  EXPECT_TRUE(made.measured);
  EXPECT_EQ(made.bytes, 536u << 20);
  EXPECT_EQ(made.source, how);
  // Unknown (no driver to ask): as before, the measurement stands.
  EXPECT_TRUE(context_figure(std::nullopt, std::nullopt, 7, how).measured);
  // A later session reports the maker's figure, not its own few MiB.
  ContextFigure first{536u << 20, 540u << 20, how, true};
  ContextFigure later = context_figure(true, first, 2u << 20, how);
  EXPECT_TRUE(later.measured);
  EXPECT_EQ(later.bytes, first.bytes);
  EXPECT_EQ(later.after_warmup, first.after_warmup);
  EXPECT_NE(later.source.find("measured by the session that made it"), std::string::npos);
  // A context someone else made: not measured, and said so.
  ContextFigure foreign = context_figure(true, std::nullopt, 2u << 20, how);
  EXPECT_FALSE(foreign.measured);
  EXPECT_EQ(foreign.bytes, 2u << 20);
  EXPECT_NE(foreign.source.find("not measured"), std::string::npos);
}

// A small planned model for the sessions.
struct Planned {
  ir::Model model;
  planner::MemoryPlan plan;
};

Planned small_model() {
  Planned p;
  p.model = ir::parse_model_text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[64,64] x) => (float[64,64] y) {
      a = MatMul(x, x)
      y = Relu(a)
    })")
                .value();
  (void)ir::infer_shapes(*p.model.graph);
  p.plan = planner::plan(*p.model.graph).value();
  return p;
}

// In the child: exits 0 when `check` holds, else prints why and exits 1.
#define XOPT_CHILD_CHECK(cond, ...)      \
  do {                                   \
    if (!(cond)) {                       \
      std::fprintf(stderr, __VA_ARGS__); \
      std::fprintf(stderr, "\n");        \
      std::exit(1);                      \
    }                                    \
  } while (0)

void two_sessions_in_a_fresh_process() {
  XOPT_CHILD_CHECK(primary_context_active(0) == false,
                   "a context existed before the first session");
  Planned p = small_model();
  auto a = Session::create(p.model, p.plan);
  XOPT_CHILD_CHECK(a.is_ok(), "%s", a.status().message().c_str());
  auto b = Session::create(p.model, p.plan);
  XOPT_CHILD_CHECK(b.is_ok(), "%s", b.status().message().c_str());
  const Footprint& fa = (*a)->footprint();
  const Footprint& fb = (*b)->footprint();
  std::fprintf(stderr, "first: %zu B (%zu after warm-up) %s\nsecond: %zu B (%zu) %s\n", fa.context,
               fa.context_after_warmup, fa.context_source.c_str(), fb.context,
               fb.context_after_warmup, fb.context_source.c_str());
  XOPT_CHILD_CHECK(fa.context_measured && fb.context_measured, "a figure was not measured");
  // An H200's context is hundreds of MiB (536 MiB measured by `xopt bench`); handles alone are a
  // few.
  XOPT_CHILD_CHECK(fa.context > (64u << 20), "the first session measured only %zu bytes",
                   fa.context);
  XOPT_CHILD_CHECK(fb.context == fa.context, "the second session reports %zu, not %zu", fb.context,
                   fa.context);
  XOPT_CHILD_CHECK(fb.context_after_warmup >= fa.context_after_warmup,
                   "the second session's after-warm-up figure is below the first's");
  std::exit(0);
}

void context_made_by_someone_else() {
  XOPT_CHILD_CHECK(cudaFree(nullptr) == cudaSuccess, "cudaFree(0) failed");
  XOPT_CHILD_CHECK(primary_context_active(0) == true, "cudaFree(0) made no context");
  Planned p = small_model();
  auto s = Session::create(p.model, p.plan);
  XOPT_CHILD_CHECK(s.is_ok(), "%s", s.status().message().c_str());
  const Footprint& f = (*s)->footprint();
  std::fprintf(stderr, "foreign: %zu B %s\n", f.context, f.context_source.c_str());
  XOPT_CHILD_CHECK(!f.context_measured, "a context the session did not make counted as measured");
  std::exit(0);
}

TEST(CudaContextFigure, LaterSessionsReportWhatTheMakerMeasured) {
  XOPT_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no context yet
  EXPECT_EXIT(two_sessions_in_a_fresh_process(), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(context_made_by_someone_else(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace xopt::cuda
