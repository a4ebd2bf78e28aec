// Conv and ConvTranspose, shared with the com.microsoft FusedConv kernel.
#pragma once

#include "executor/cpu/kernel.h"
#include "executor/cpu/kernels/nn_util.h"

namespace xopt::exec::nn {

// Runs Conv with the node's attributes on inputs X (0), W (1), optional B (2) into output 0. When
// `z` is given (FusedConv's 4th input) it is added to the convolution before `act` is applied.
Status run_conv(KernelContext& ctx, const Activation& act, const ir::Tensor* z);

}  // namespace xopt::exec::nn
