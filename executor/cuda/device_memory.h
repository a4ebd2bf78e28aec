// Owned device and pinned host memory. Every device allocation the CUDA executor makes goes through
// DeviceBuffer::allocate, which counts them, so a test can prove that nothing is allocated after
// load.
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace xopt::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // `bytes` of device memory (none for 0); the error names `what` and the size.
  static Result<DeviceBuffer> allocate(size_t bytes, const std::string& what);
  // cudaMalloc calls made through allocate() in this process so far.
  static size_t allocations();

  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory for input and output staging (host memory, not device memory).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  static Result<PinnedBuffer> allocate(size_t bytes);
  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Device memory in use on GPU `device`, by every process: through NVML (loaded at run time, so no
// build or CI machine needs the driver) when it is there, which needs no CUDA context, else
// cudaMemGetInfo's total - free. `source` says which ("nvml" or "cudaMemGetInfo"). Differences of
// two readings taken the same way are what the context and our regions cost, whatever other
// processes (a PyTorch benchmark beside us) hold.
Result<size_t> device_memory_in_use(int device, std::string* source = nullptr);

}  // namespace xopt::cuda
