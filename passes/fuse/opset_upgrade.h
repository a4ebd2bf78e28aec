// Raising a model's default-domain (ai.onnx) opset import when every node keeps its meaning, so a
// fusion can use an op the model's opset lacks (fuse-layernorm: LayerNormalization, opset 17) and
// convert-precision can store Conv and the pools in bfloat16 (opset 22).
//
// A node keeps its meaning when its op's schema is the same at both versions, or when every schema
// change in between is one the node does not feel: new types, new attributes or optional inputs
// whose defaults are the old behaviour. Changes that are respelled: at opset 13 the `axes` or
// `split` attribute of Squeeze, Unsqueeze, ReduceSum and Split becomes a constant input, Softmax,
// LogSoftmax and Hardmax over the last axis keep their meaning with the axis made explicit, and
// Dropout drops its training-only `ratio`; at 18 the other Reduce ops' `axes` becomes an input and
// Split without sizes gets `num_outputs`; at 20 GridSample's modes are renamed (bilinear -> linear,
// bicubic -> cubic) and DFT's `axis` becomes an input; at 21 GroupNormalization's scale and bias
// (initializers) become per channel. Anything else (subgraphs, model-local functions, sources
// below opset 11, targets past 22, ops removed or changed in meaning) blocks the upgrade.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace xopt::passes::fuse {

// "" when upgrade_default_opset(model, target) keeps what every node computes; otherwise why not,
// naming the first node that blocks it. Needs the model's shapes (the Softmax family's rank).
std::string opset_upgrade_blocker(const ir::Model& model, int64_t target);

// Whether ONNX's `op` first takes bfloat16 at opset 22 (Conv, ConvTranspose, the pools,
// InstanceNormalization, HardSigmoid, HardSwish, Elu, Softplus, the trigonometric ops,
// RNN/GRU/LSTM,
// ...): what the libonnx 1.12 schemas cannot say. The generators (RandomNormal, Bernoulli, EyeLike,
// ...) are left out: their output type is an attribute, not a float input.
bool takes_bfloat16_from_22(const std::string& op);

// Raises the default-domain opset import to `target` (and the IR version to at least the one that
// opset shipped with) and rewrites the nodes whose spelling changed. Only after
// opset_upgrade_blocker returned "".
void upgrade_default_opset(ir::Model& model, int64_t target);

}  // namespace xopt::passes::fuse
