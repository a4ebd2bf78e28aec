// Constant writes (see constant.cuh).
#include <cstdint>
#include <cstring>

#include "executor/cuda/kernels/constant.cuh"
#include "executor/cuda/kernels/device_util.cuh"

namespace xopt::cuda {
namespace {

__global__ void write_chunk_kernel(unsigned char* dst, ConstChunk c) {
  for (uint32_t i = threadIdx.x; i < c.bytes; i += blockDim.x) dst[i] = c.data[i];
}

__global__ void write_chunk_words_kernel(uint32_t* dst, ConstChunk c) {
  const auto* src = reinterpret_cast<const uint32_t*>(c.data);
  for (uint32_t i = threadIdx.x; i < c.bytes / 4; i += blockDim.x) dst[i] = src[i];
}

template <typename T>
__global__ void fill_kernel(T* dst, T value, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = value;
}

template <typename T>
cudaError_t fill(void* dst, uint64_t bits, int64_t n, cudaStream_t s) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  fill_kernel<T><<<dev::grid_for(n), dev::kThreads, 0, s>>>(static_cast<T*>(dst), v, n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_write_chunk(void* dst, const ConstChunk& c, cudaStream_t s) {
  if (c.bytes == 0) return cudaSuccess;
  if (c.bytes % 4 == 0 && dev::aligned(dst, 4))
    write_chunk_words_kernel<<<1, 256, 0, s>>>(static_cast<uint32_t*>(dst), c);
  else
    write_chunk_kernel<<<1, 256, 0, s>>>(static_cast<unsigned char*>(dst), c);
  return cudaGetLastError();
}

cudaError_t launch_fill(void* dst, size_t es, uint64_t bits, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  switch (es) {
    case 1:
      return fill<uint8_t>(dst, bits, n, s);
    case 2:
      return fill<uint16_t>(dst, bits, n, s);
    case 4:
      return fill<uint32_t>(dst, bits, n, s);
    case 8:
      return fill<uint64_t>(dst, bits, n, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace xopt::cuda
