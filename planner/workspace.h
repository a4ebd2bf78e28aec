// Workspace: scratch memory a node needs only while it runs. All nodes share one region sized for
// the largest need (nodes run one at a time). The numbers come from a small cost model of the
// reference kernels; the CUDA executor will later report the real cuDNN/cuBLAS needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::planner {

// Scratch bytes for one node. Conv-like ops (Conv, ConvInteger, QLinearConv, com.microsoft
// FusedConv) need an im2col buffer of C_in/group * prod(kernel) * prod(output spatial) elements of
// the input type for one image and one group (none for a 1x1 kernel with unit strides and no
// padding, which is a plain GEMM), plus, when its begin and end pads differ (explicit or SAME_*),
// a padded copy of the input (cuDNN pads symmetrically); ConvTranspose a col2im buffer of
// C_out/group * prod(kernel) * prod(input spatial). com.microsoft MultiHeadAttention needs its
// score matrices (chunk x heads x S x L, the batch in chunks: attention_batch_chunk) and, with a
// bias, Q, K and V split into heads for one chunk (what the CUDA kernel takes; the GPU's figures
// replace these with `xopt --device cuda`); none when attention_fused_applies. Other ops need
// none. Errors name the node when a shape it needs is not static.
Result<size_t> node_workspace_bytes(const ir::Node& n);

// com.microsoft MultiHeadAttention runs its batch in chunks so that its scratch (the score
// matrices, and Q/K/V split into heads when a bias is added first) stays within
// kAttentionChunkBytes: the largest divisor of `batch` whose chunk of `bytes_per_item` fits, at
// least 1. The CUDA kernel and the workspace model above both use it, so plan and executor agree.
inline constexpr size_t kAttentionChunkBytes = size_t{16} << 20;
int64_t attention_batch_chunk(int64_t batch, size_t bytes_per_item);

// Whether the CUDA executor runs com.microsoft MultiHeadAttention as one fused kernel without
// workspace: head sizes h (query/key) and hv (value) in [1, kAttentionFusedMaxHead] and no
// present_key/present_value output. The kernel and the workspace model above both ask this.
inline constexpr int64_t kAttentionFusedMaxHead = 128;
bool attention_fused_applies(int64_t h, int64_t hv, bool present_outputs);

struct Workspace {
  std::vector<size_t> per_node;  // parallel to the node order
  size_t bytes = 0;              // the shared region: the largest need, aligned
};
Result<Workspace> plan_workspace(const std::vector<const ir::Node*>& order, size_t alignment = 256);

}  // namespace xopt::planner
