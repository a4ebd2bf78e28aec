// parallel_for: chunks cover the range once, depend only on (n, grain, threads), nest serially;
// a threaded run gives the bits of a run at the same thread count and forwards views.
#include "executor/cpu/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "executor/cpu/session.h"
#include "ir/text.h"

namespace xopt::exec {
namespace {

std::vector<std::pair<int64_t, int64_t>> chunks_of(int64_t n, int64_t grain) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> got;
  parallel_for(n, grain, [&](int64_t lo, int64_t hi) {
    std::lock_guard<std::mutex> lock(mu);
    got.emplace_back(lo, hi);
  });
  std::sort(got.begin(), got.end());
  return got;
}

TEST(Parallel, OutsideARunIsSerial) {
  EXPECT_EQ(intra_op_threads(), 1);
  EXPECT_EQ(chunks_of(1000, 1), (std::vector<std::pair<int64_t, int64_t>>{{0, 1000}}));
}

TEST(Parallel, ChunksCoverTheRangeOnceAndDependOnlyOnTheirArguments) {
  const ScopedIntraOpThreads threads(3);
  EXPECT_EQ(parallel_chunks(10, 1), 3);
  EXPECT_EQ(parallel_chunks(10, 4), 2);
  EXPECT_EQ(parallel_chunks(0, 1), 0);
  const auto a = chunks_of(10, 1);
  EXPECT_EQ(a, (std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, 6}, {6, 10}}));
  for (int i = 0; i < 50; ++i) ASSERT_EQ(chunks_of(10, 1), a);
  std::vector<std::atomic<int>> hits(100000);
  parallel_for(100000, 7, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(Parallel, NestedCallsRunOnTheCallingThread) {
  const ScopedIntraOpThreads threads(2);
  std::atomic<int64_t> total{0};
  parallel_for(4, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      parallel_for(1000, 1, [&](int64_t a, int64_t b) { total += b - a; });
  });
  EXPECT_EQ(total.load(), 4000);
}

TEST(Parallel, ThreadedRunsAreRepeatableAndReshapeSharesBytes) {
  auto m = ir::parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[64, 512] x, float[512, 256] w) => (float[64, 256] y, float[32768] f) {
      h = MatMul(x, w)
      r = Relu(h)
      s = Softmax(r)
      y = Identity(s)
      shape = Constant<value = int64[1] {32768}>()
      f = Reshape(x, shape)
    }
  )");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  std::vector<float> xv(64 * 512), wv(512 * 256);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 7919) % 13) / 13.0f - 0.5f;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>((i * 104729) % 17) / 17.0f;
  const std::map<std::string, ir::Tensor> in = {{"x", ir::Tensor::of<float>({64, 512}, xv)},
                                                {"w", ir::Tensor::of<float>({512, 256}, wv)}};
  RunOptions two;
  two.threads = 2;
  auto a = run_model(*m, in, two);
  auto b = run_model(*m, in, two);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_TRUE((*a)[0].same_contents((*b)[0]));
  // Reshape of a graph input forwards its bytes in simple mode.
  EXPECT_EQ((*a)[1].raw_data(), in.at("x").raw_data());
  RunOptions one;
  one.threads = 1;
  auto c = run_model(*m, in, one);
  ASSERT_TRUE(c.is_ok());
  const float* p = (*a)[0].data<float>();
  const float* q = (*c)[0].data<float>();
  for (int64_t i = 0; i < (*a)[0].numel(); ++i) ASSERT_NEAR(p[i], q[i], 1e-6f) << i;
}

}  // namespace
}  // namespace xopt::exec
