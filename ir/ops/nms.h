// NonMaxSuppression's selection, shared by the CPU kernel and shape inference (which runs it when
// every input is a constant, so that the output's row count is known).
#pragma once

#include <cstdint>
#include <vector>

namespace xopt::ir::ops {

struct NmsParams {
  int64_t batches = 0, classes = 0, boxes = 0;
  int64_t max_per_class = 0;
  double iou_threshold = 0.0;
  bool has_score_threshold = false;
  double score_threshold = 0.0;
  bool center_point_box = false;
};

// boxes [batches, boxes, 4], scores [batches, classes, boxes] (row-major); returns the selected
// (batch, class, box) triples flattened, in the spec's order (per batch, per class, by score).
std::vector<int64_t> nms_select(const std::vector<double>& boxes, const std::vector<double>& scores,
                                const NmsParams& p);

}  // namespace xopt::ir::ops
