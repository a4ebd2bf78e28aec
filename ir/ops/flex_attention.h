// FlexAttention (ai.onnx.preview, opset 1): scaled dot-product attention over rank-4 Q, K, V with
// two optional modifier subgraphs, score_mod (after Q K^T * scale) and prob_mod (after the
// softmax), each taking and giving one [B, Hq, L, S] tensor of the softmax precision.
#pragma once

#include "common/status.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace xopt::ir::ops {

inline constexpr const char* kPreviewDomain = "ai.onnx.preview";

// The element type the scores, the softmax and the modifiers use: the softmax_precision attribute,
// else double for double inputs and float for every other input type.
Result<DType> flex_softmax_dtype(const Node& node, DType input);

// Y [B, Hq, L, Ev] of Q's type; the modifiers are inferred with their input typed.
Status infer_flex_attention(InferenceContext& ctx);

}  // namespace xopt::ir::ops
