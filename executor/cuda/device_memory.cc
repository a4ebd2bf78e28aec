#include "executor/cuda/device_memory.h"

#include <cuda_runtime.h>

#include <atomic>
#include <utility>

#include "executor/cuda/dynamic_library.h"
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

namespace {

// The few NVML entry points needed, by their stable C ABI (nvml.h is not part of the toolkit here).
struct Nvml {
  struct Memory {
    unsigned long long total, free, used;
  };
  using Device = void*;
  int (*init)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  int (*memory)(Device, Memory*) = nullptr;
  bool ok = false;

  static const Nvml& get() {
    static const Nvml n = [] {
      static const DynamicLibrary lib("libnvidia-ml.so.1");
      Nvml n;
      n.ok = lib.find("nvmlInit_v2", &n.init) &&
             lib.find("nvmlDeviceGetHandleByPciBusId_v2", &n.by_pci) &&
             lib.find("nvmlDeviceGetMemoryInfo", &n.memory) && n.init() == 0;
      return n;
    }();
    return n;
  }
};

}  // namespace

Result<size_t> device_memory_in_use(int device, std::string* source) {
  const Nvml& nvml = Nvml::get();
  if (nvml.ok) {
    char bus[32] = {};
    Nvml::Device d = nullptr;
    Nvml::Memory m{};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess &&
        nvml.by_pci(bus, &d) == 0 && nvml.memory(d, &m) == 0) {
      if (source != nullptr) *source = "nvml";
      return static_cast<size_t>(m.used);
    }
    cudaGetLastError();
  }
  size_t free_bytes = 0, total = 0;
  cudaError_t e = cudaMemGetInfo(&free_bytes, &total);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return internal_error(std::string("cudaMemGetInfo: ") + cudaGetErrorString(e));
  }
  if (source != nullptr) *source = "cudaMemGetInfo";
  return total - free_bytes;
}

}  // namespace xopt::cuda
