#include "executor/cuda/device_memory.h"

#include <cuda_runtime.h>

#include <atomic>
#include <utility>

#include "planner/report.h"

namespace xopt::cuda {

namespace {
std::atomic<size_t> g_allocations{0};
}  // namespace

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, const std::string& what) {
  DeviceBuffer b;
  if (bytes == 0) return b;
  cudaError_t e = cudaMalloc(&b.data_, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    b.data_ = nullptr;
    return Status(ErrorCode::kUnsupported, "cannot allocate the " + what + " on the GPU (" +
                                               planner::human_bytes(bytes) +
                                               "): " + cudaGetErrorString(e));
  }
  ++g_allocations;
  b.size_ = bytes;
  return b;
}

size_t DeviceBuffer::allocations() {
  return g_allocations.load();
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) cudaFreeHost(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

Result<PinnedBuffer> PinnedBuffer::allocate(size_t bytes) {
  PinnedBuffer b;
  if (bytes == 0) return b;
  cudaError_t e = cudaHostAlloc(&b.data_, bytes, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    cudaGetLastError();
    b.data_ = nullptr;
    return Status(ErrorCode::kUnsupported, "cannot allocate " + planner::human_bytes(bytes) +
                                               " of pinned host memory: " + cudaGetErrorString(e));
  }
  b.size_ = bytes;
  return b;
}

}  // namespace xopt::cuda
