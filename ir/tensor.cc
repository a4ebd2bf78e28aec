#include "ir/tensor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cstring>

#include "ir/narrow_float.h"

namespace xopt::ir {

MappedStorage::~MappedStorage() {
  if (addr_ != nullptr && size_ > 0) munmap(addr_, size_);
}

std::shared_ptr<MappedStorage> MappedStorage::map(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = "cannot stat '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  auto size = static_cast<size_t>(st.st_size);
  void* addr = nullptr;
  if (size > 0) {
    addr = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      *error = "cannot mmap '" + path + "': " + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
  }
  ::close(fd);
  return std::shared_ptr<MappedStorage>(new MappedStorage(addr, size));
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims) : dtype_(dtype), dims_(std::move(dims)) {
  if (dtype_ == DType::kString) {
    strings_.resize(static_cast<size_t>(numel()));
  } else {
    storage_ = std::make_shared<OwnedStorage>(nbytes());
  }
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<Storage> storage,
               size_t offset)
    : dtype_(dtype), dims_(std::move(dims)), storage_(std::move(storage)), offset_(offset) {
  assert(!storage_ || offset_ + nbytes() <= storage_->size());
}

Tensor Tensor::of_strings(std::vector<int64_t> dims, std::vector<std::string> values) {
  Tensor t;
  t.dtype_ = DType::kString;
  t.dims_ = std::move(dims);
  t.strings_ = std::move(values);
  return t;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

bool Tensor::is_mapped() const {
  return storage_ != nullptr && dynamic_cast<const MappedStorage*>(storage_.get()) != nullptr;
}

const void* Tensor::raw_data() const {
  if (!storage_) return nullptr;
  return storage_->data() + offset_;
}

void* Tensor::mutable_raw_data() {
  if (!storage_) return nullptr;
  if (storage_.use_count() > 1 || storage_->mutable_data() == nullptr) {
    auto copy = std::make_shared<OwnedStorage>(nbytes());
    std::memcpy(copy->mutable_data(), raw_data(), nbytes());
    storage_ = std::move(copy);
    offset_ = 0;
  }
  return storage_->mutable_data() + offset_;
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  assert(t.numel() == numel());
  return t;
}

namespace {
template <typename F>
auto visit_numeric(DType t, const void* p, int64_t i, F&& f) {
  switch (t) {
    case DType::kFloat:
      return f(static_cast<const float*>(p)[i]);
    case DType::kDouble:
      return f(static_cast<const double*>(p)[i]);
    case DType::kInt8:
      return f(static_cast<const int8_t*>(p)[i]);
    case DType::kUInt8:
      return f(static_cast<const uint8_t*>(p)[i]);
    case DType::kInt16:
      return f(static_cast<const int16_t*>(p)[i]);
    case DType::kUInt16:
      return f(static_cast<const uint16_t*>(p)[i]);
    case DType::kInt32:
      return f(static_cast<const int32_t*>(p)[i]);
    case DType::kUInt32:
      return f(static_cast<const uint32_t*>(p)[i]);
    case DType::kInt64:
      return f(static_cast<const int64_t*>(p)[i]);
    case DType::kUInt64:
      return f(static_cast<const uint64_t*>(p)[i]);
    case DType::kBool:
      return f(static_cast<const bool*>(p)[i]);
    case DType::kFloat16:
      return f(half_to_float(static_cast<const uint16_t*>(p)[i]));
    case DType::kBFloat16:
      return f(bfloat16_to_float(static_cast<const uint16_t*>(p)[i]));
    case DType::kInt4:
    case DType::kInt2:
      return f(static_cast<const int8_t*>(p)[i]);  // sign-extended in memory
    case DType::kUInt4:
    case DType::kUInt2:
      return f(static_cast<const uint8_t*>(p)[i]);
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
      return f(narrow_float_to_float(t, static_cast<const uint8_t*>(p)[i]));
    default:
      return f(0);
  }
}
}  // namespace

double Tensor::as_double(int64_t i) const {
  return visit_numeric(dtype_, raw_data(), i, [](auto v) { return static_cast<double>(v); });
}

int64_t Tensor::as_int64(int64_t i) const {
  return visit_numeric(dtype_, raw_data(), i, [](auto v) { return static_cast<int64_t>(v); });
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = as_int64(i);
  return out;
}

bool Tensor::same_contents(const Tensor& o) const {
  if (dtype_ != o.dtype_ || dims_ != o.dims_) return false;
  if (dtype_ == DType::kString) return strings_ == o.strings_;
  return nbytes() == 0 || std::memcmp(raw_data(), o.raw_data(), nbytes()) == 0;
}

}  // namespace xopt::ir
