// Values known when the model is compiled: Constant, Shape, Size, ConstantOfShape. Their bytes
// travel inside the launch's kernel parameters (in chunks), or as one repeated element, so a run
// reads no host memory and nothing is allocated.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace xopt::cuda {

inline constexpr size_t kConstChunkBytes = 3072;

// bytes (at most kConstChunkBytes) to write at dst.
struct ConstChunk {
  uint32_t bytes = 0;
  alignas(16) unsigned char data[kConstChunkBytes] = {};
};
cudaError_t launch_write_chunk(void* dst, const ConstChunk& chunk, cudaStream_t stream);

// n elements of elem_size bytes (1, 2, 4 or 8), each value_bits.
cudaError_t launch_fill(void* dst, size_t elem_size, uint64_t value_bits, int64_t n,
                        cudaStream_t stream);

}  // namespace xopt::cuda
