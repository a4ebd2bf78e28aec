// The Conv/Pool window geometry both executors share (executor/window.h), on nodes parsed from
// ONNX text: output dims and pads under every auto_pad, ceil_mode, dilations, and the errors.
#include "executor/window.h"

#include <gtest/gtest.h>

#include "ir/text.h"

namespace xopt::exec {
namespace {

using Dims = std::vector<int64_t>;

// The window of the graph's single node, with `attrs`, over x [1, 1, 7, 6] (or `x`).
Result<Window> window(const std::string& attrs, const Dims& x = {1, 1, 7, 6},
                      bool ceil_mode = false) {
  auto m = ir::parse_model_text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[1,1,7,6] x) => (float y) { y = MaxPool <)" +
                                attrs + R"(> (x) })");
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  if (!m.is_ok()) return m.status();
  const ir::Node* n = *m->graph->nodes().begin();
  return window_of(*n, x, {}, ceil_mode);
}

TEST(Window, OutputDimsAndPadsUnderEachAutoPad) {
  auto w = window("kernel_shape = [3, 2], strides = [2, 2], pads = [1, 0, 1, 0]");
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  EXPECT_EQ(w->in, (Dims{7, 6}));
  EXPECT_EQ(w->out, (Dims{4, 3}));  // (7 + 2 - 3) / 2 + 1, (6 - 2) / 2 + 1
  EXPECT_TRUE(w->symmetric());

  auto upper = window("kernel_shape = [4, 4], auto_pad = \"SAME_UPPER\"");
  ASSERT_TRUE(upper.is_ok()) << upper.status().message();
  EXPECT_EQ(upper->out, (Dims{7, 6}));
  EXPECT_EQ(upper->pads, (Dims{1, 1, 2, 2}));  // 3 in total per dim: the extra one at the end
  EXPECT_FALSE(upper->symmetric());
  auto lower = window("kernel_shape = [4, 4], auto_pad = \"SAME_LOWER\"");
  ASSERT_TRUE(lower.is_ok());
  EXPECT_EQ(lower->pads, (Dims{2, 2, 1, 1}));

  auto valid = window("kernel_shape = [3, 3], pads = [1, 1, 1, 1], auto_pad = \"VALID\"");
  ASSERT_TRUE(valid.is_ok());
  EXPECT_EQ(valid->out, (Dims{5, 4}));
  EXPECT_EQ(valid->pads, (Dims{0, 0, 0, 0}));

  auto dilated = window("kernel_shape = [3, 3], dilations = [2, 1]");
  ASSERT_TRUE(dilated.is_ok());
  EXPECT_EQ(dilated->extent(0), 5);
  EXPECT_EQ(dilated->out, (Dims{3, 4}));
}

TEST(Window, CeilModeDropsAWindowStartingInThePadding) {
  auto floor = window("kernel_shape = [2, 2], strides = [2, 2]", {1, 1, 7, 6}, false);
  auto ceil = window("kernel_shape = [2, 2], strides = [2, 2]", {1, 1, 7, 6}, true);
  ASSERT_TRUE(floor.is_ok() && ceil.is_ok());
  EXPECT_EQ(floor->out, (Dims{3, 3}));
  EXPECT_EQ(ceil->out, (Dims{4, 3}));
  // Padding at the end only: a fourth ceil window would start inside the end padding.
  auto padded =
      window("kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 2, 0]", {1, 1, 5, 6}, true);
  ASSERT_TRUE(padded.is_ok());
  EXPECT_EQ(padded->out, (Dims{3, 3}));
}

TEST(Window, ErrorsSayWhatIsWrong) {
  auto rank = window("kernel_shape = [2, 2]", {4, 6});
  ASSERT_FALSE(rank.is_ok());
  EXPECT_NE(rank.status().message().find("got rank 2 ([4,6])"), std::string::npos)
      << rank.status().message();
  auto kernel = window("kernel_shape = [2]");
  ASSERT_FALSE(kernel.is_ok());
  EXPECT_NE(kernel.status().message().find("kernel_shape has 1 dims"), std::string::npos);
  auto pads = window("kernel_shape = [2, 2], pads = [0, -1, 0, 0]");
  ASSERT_FALSE(pads.is_ok());
  EXPECT_NE(pads.status().message().find("pads must be non-negative"), std::string::npos);
  auto strides = window("kernel_shape = [2, 2], strides = [0, 1]");
  ASSERT_FALSE(strides.is_ok());
  EXPECT_NE(strides.status().message().find("must be positive"), std::string::npos);
  auto mode = window("kernel_shape = [2, 2], auto_pad = \"SIDEWAYS\"");
  ASSERT_FALSE(mode.is_ok());
  EXPECT_NE(mode.status().message().find("unknown auto_pad 'SIDEWAYS'"), std::string::npos);
}

}  // namespace
}  // namespace xopt::exec
