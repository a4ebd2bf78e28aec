// Dense tensors. Bytes live in a shared Storage: owned memory, or a read-only mmap of an external
// data file (so loading a model never copies its weights). Copying a Tensor shares the bytes;
// mutable_data() copies on write when the storage is shared or mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/shape.h"

namespace xopt::ir {

class Storage {
 public:
  virtual ~Storage() = default;
  virtual const std::byte* data() const = 0;
  virtual size_t size() const = 0;
  // Owned storage can be written; mapped storage cannot.
  virtual std::byte* mutable_data() { return nullptr; }
};

// Heap bytes. Constructed from a std::string by move so protobuf's raw_data can be adopted without a copy.
class OwnedStorage final : public Storage {
 public:
  explicit OwnedStorage(size_t n) : bytes_(n, '\0') {}
  explicit OwnedStorage(std::string&& bytes) : bytes_(std::move(bytes)) {}
  const std::byte* data() const override { return reinterpret_cast<const std::byte*>(bytes_.data()); }
  std::byte* mutable_data() override { return reinterpret_cast<std::byte*>(bytes_.data()); }
  size_t size() const override { return bytes_.size(); }

 private:
  std::string bytes_;
};

// A read-only memory map of a whole file, unmapped when the last tensor using it goes away.
class MappedStorage final : public Storage {
 public:
  ~MappedStorage() override;
  MappedStorage(const MappedStorage&) = delete;
  MappedStorage& operator=(const MappedStorage&) = delete;
  // Maps `path` read-only; nullptr plus `error` set on failure.
  static std::shared_ptr<MappedStorage> map(const std::string& path, std::string* error);
  const std::byte* data() const override { return static_cast<const std::byte*>(addr_); }
  size_t size() const override { return size_; }

 private:
  MappedStorage(void* addr, size_t size) : addr_(addr), size_(size) {}
  void* addr_;
  size_t size_;
};

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor of the given type and dims.
  Tensor(DType dtype, std::vector<int64_t> dims);
  // A view of `nbytes` bytes at `offset` in `storage`.
  Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<Storage> storage, size_t offset = 0);
  // A tensor of strings (DType::kString).
  static Tensor of_strings(std::vector<int64_t> dims, std::vector<std::string> values);
  // A tensor holding a copy of `values`.
  template <typename T>
  static Tensor of(std::vector<int64_t> dims, const std::vector<T>& values);
  template <typename T>
  static Tensor scalar(T v) {
    return of<T>({}, std::vector<T>{v});
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  Shape shape() const { return Shape::of(dims_); }
  size_t rank() const { return dims_.size(); }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool empty() const { return dtype_ == DType::kUndefined; }
  bool is_mapped() const;

  const void* raw_data() const;
  // Writable bytes; copies first when the bytes are shared with another Tensor or mapped.
  void* mutable_raw_data();
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }
  template <typename T>
  T* mutable_data() {
    return static_cast<T*>(mutable_raw_data());
  }
  const std::vector<std::string>& strings() const { return strings_; }
  std::vector<std::string>& mutable_strings() { return strings_; }

  // Same bytes, new dims (numel must match).
  Tensor reshaped(std::vector<int64_t> dims) const;
  // Element i converted to double / int64 (any numeric dtype); handy for scalars and attributes-as-inputs.
  double as_double(int64_t i = 0) const;
  int64_t as_int64(int64_t i = 0) const;
  std::vector<int64_t> to_int64_vector() const;
  // Bytes and strings compare equal (dtype and dims too).
  bool same_contents(const Tensor& o) const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  size_t offset() const { return offset_; }

 private:
  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> dims_;
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
  std::vector<std::string> strings_;
};

template <typename T>
Tensor Tensor::of(std::vector<int64_t> dims, const std::vector<T>& values) {
  Tensor t(dtype_of<T>(), std::move(dims));
  if constexpr (std::is_same_v<T, bool>) {
    auto* p = t.mutable_data<bool>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  } else {
    std::copy(values.begin(), values.end(), t.mutable_data<T>());
  }
  return t;
}

}  // namespace xopt::ir
