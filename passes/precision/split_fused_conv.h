// onnxruntime's com.microsoft.FusedConv has no bfloat16 kernel (its schema takes float and float16)
// while ONNX's Conv and the activations take bfloat16 from opset 22. So that a fused convolution
// can be stored in bf16, each FusedConv(x, W, b, z) <activation, activation_params> becomes
// Conv(x, W, b) [-> Add(., z)] [-> Relu | Sigmoid | Tanh | LeakyRelu | HardSigmoid | Clip]: the
// Conv keeps the fused node's name and every new node its provenance.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace xopt::passes {

// Splits every FusedConv of `g` (not its subgraphs) whose activation is one of the above, in
// place; returns how many. The graph must be at opset 11 or later (Clip's bounds are inputs).
int64_t split_fused_convs(ir::Graph& g);

}  // namespace xopt::passes
