#include "ir/tensor_proto.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>

#include "ir/narrow_float.h"

namespace xopt::ir {

namespace fs = std::filesystem;

Result<std::string> resolve_external_path(const std::string& base_dir,
                                          const std::string& location) {
  if (location.empty()) return invalid_model("external data has an empty location");
  fs::path loc(location);
  if (loc.is_absolute()) {
    return invalid_model("external data location '" + location +
                         "' is an absolute path; it must be relative to the model's folder");
  }
  for (const auto& part : loc)
    if (part == "..") {
      return invalid_model("external data location '" + location +
                           "' contains '..'; it must stay inside the model's folder");
    }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(base_dir.empty() ? fs::path(".") : fs::path(base_dir), ec);
  fs::path full = base / loc;
  fs::path real = fs::weakly_canonical(full, ec);
  if (ec) return io_error("cannot resolve external data '" + location + "': " + ec.message());
  auto rel = real.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    return invalid_model("external data location '" + location +
                         "' resolves outside the model's folder (through a symbolic link)");
  }
  return real.string();
}

namespace {

// Maps each external data file once per load; keyed by identity so a rewritten file is mapped anew.
std::shared_ptr<MappedStorage> map_cached(const std::string& path, std::string* error) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    *error = "external data file '" + path + "' does not exist";
    return nullptr;
  }
  using Key = std::tuple<std::string, ino_t, int64_t, int64_t>;
  static std::mutex mu;
  static std::map<Key, std::weak_ptr<MappedStorage>> cache;
  Key key{path, st.st_ino, static_cast<int64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  std::lock_guard<std::mutex> lock(mu);
  if (auto hit = cache[key].lock()) return hit;
  auto m = MappedStorage::map(path, error);
  if (m) cache[key] = m;
  return m;
}

// ONNX packs sub-byte elements low bits first: two 4-bit or four 2-bit elements a byte.
void unpack_subbyte(DType t, const uint8_t* in, int64_t n, uint8_t* out) {
  const int bits = dtype_bits(t);
  const int per = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const unsigned v = (in[i / per] >> ((i % per) * bits)) & mask;
    out[i] = is_narrow_int(t) ? wrap_narrow_int(t, v) : static_cast<uint8_t>(v);
  }
}

// A sub-byte tensor's packed bytes, unpacked into a new tensor of one byte per element.
Tensor unpacked(DType t, std::vector<int64_t> dims, const uint8_t* packed) {
  Tensor out(t, std::move(dims));
  unpack_subbyte(t, packed, out.numel(), static_cast<uint8_t*>(out.mutable_raw_data()));
  return out;
}

template <typename Dst, typename Src>
void copy_field(Tensor& t, const Src& field) {
  auto* out = t.mutable_data<Dst>();
  int i = 0;
  for (const auto& v : field) out[i++] = static_cast<Dst>(v);
}

// Elements stored in the typed field that `dtype` uses (complex types store two values per
// element).
int64_t typed_count(const onnx::TensorProto& p, DType dtype) {
  switch (dtype) {
    case DType::kFloat:
      return p.float_data_size();
    case DType::kComplex64:
      return p.float_data_size() / 2;
    case DType::kDouble:
      return p.double_data_size();
    case DType::kComplex128:
      return p.double_data_size() / 2;
    case DType::kInt64:
      return p.int64_data_size();
    case DType::kUInt32:
    case DType::kUInt64:
      return p.uint64_data_size();
    case DType::kString:
      return p.string_data_size();
    default:
      return p.int32_data_size();
  }
}

Status decode_typed(const onnx::TensorProto& p, Tensor& t) {
  const auto n = static_cast<size_t>(t.numel());
  auto check = [&](int size, size_t per) -> Status {
    if (static_cast<size_t>(size) != n * per) {
      return invalid_model("tensor '" + p.name() + "' has " + std::to_string(size) +
                           " values for " + std::to_string(n) + " elements");
    }
    return Status::ok();
  };
  switch (t.dtype()) {
    case DType::kFloat:
      XOPT_RETURN_IF_ERROR(check(p.float_data_size(), 1));
      copy_field<float>(t, p.float_data());
      break;
    case DType::kComplex64:
      XOPT_RETURN_IF_ERROR(check(p.float_data_size(), 2));
      copy_field<float>(t, p.float_data());
      break;
    case DType::kDouble:
      XOPT_RETURN_IF_ERROR(check(p.double_data_size(), 1));
      copy_field<double>(t, p.double_data());
      break;
    case DType::kComplex128:
      XOPT_RETURN_IF_ERROR(check(p.double_data_size(), 2));
      copy_field<double>(t, p.double_data());
      break;
    case DType::kInt64:
      XOPT_RETURN_IF_ERROR(check(p.int64_data_size(), 1));
      copy_field<int64_t>(t, p.int64_data());
      break;
    case DType::kUInt32:
      XOPT_RETURN_IF_ERROR(check(p.uint64_data_size(), 1));
      copy_field<uint32_t>(t, p.uint64_data());
      break;
    case DType::kUInt64:
      XOPT_RETURN_IF_ERROR(check(p.uint64_data_size(), 1));
      copy_field<uint64_t>(t, p.uint64_data());
      break;
    case DType::kInt32:
      XOPT_RETURN_IF_ERROR(check(p.int32_data_size(), 1));
      copy_field<int32_t>(t, p.int32_data());
      break;
    case DType::kInt16:
      XOPT_RETURN_IF_ERROR(check(p.int32_data_size(), 1));
      copy_field<int16_t>(t, p.int32_data());
      break;
    case DType::kInt8:
      XOPT_RETURN_IF_ERROR(check(p.int32_data_size(), 1));
      copy_field<int8_t>(t, p.int32_data());
      break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      XOPT_RETURN_IF_ERROR(check(p.int32_data_size(), 1));
      copy_field<uint16_t>(t, p.int32_data());
      break;
    case DType::kUInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      XOPT_RETURN_IF_ERROR(check(p.int32_data_size(), 1));
      copy_field<uint8_t>(t, p.int32_data());
      break;
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kUInt2:
    case DType::kInt2: {
      std::vector<uint8_t> bytes(p.int32_data().begin(), p.int32_data().end());
      unpack_subbyte(t.dtype(), bytes.data(), t.numel(),
                     static_cast<uint8_t*>(t.mutable_raw_data()));
      break;
    }
    case DType::kBool: {
      XOPT_RETURN_IF_ERROR(check(p.int32_data_size(), 1));
      auto* out = t.mutable_data<bool>();
      for (int i = 0; i < p.int32_data_size(); ++i) out[i] = p.int32_data(i) != 0;
      break;
    }
    default:
      return unsupported("tensor '" + p.name() + "' has an unsupported data type");
  }
  return Status::ok();
}

}  // namespace

Result<Tensor> tensor_from_proto(onnx::TensorProto p, const std::string& base_dir,
                                 TensorEncoding* encoding) {
  auto dtype = static_cast<DType>(p.data_type());
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  for (int64_t d : dims)
    if (d < 0) return invalid_model("tensor '" + p.name() + "' has a negative dimension");
  if (dtype == DType::kUndefined || (dtype_size(dtype) == 0 && dtype != DType::kString))
    return invalid_model("tensor '" + p.name() + "' has no valid data_type");
  if (p.has_segment()) return unsupported("tensor '" + p.name() + "' uses segments");

  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > (int64_t{1} << 50) / d)
      return invalid_model("tensor '" + p.name() + "' has an impossibly large shape");
    n *= d;
  }
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    if (encoding) *encoding = TensorEncoding::kExternal;
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : p.external_data()) {
      try {
        if (kv.key() == "location")
          location = kv.value();
        else if (kv.key() == "offset")
          offset = std::stoll(kv.value());
        else if (kv.key() == "length")
          length = std::stoll(kv.value());
      } catch (const std::exception&) {
        return invalid_model("tensor '" + p.name() + "' has a malformed external_data '" +
                             kv.key() + "'");
      }
    }
    XOPT_ASSIGN_OR_RETURN(std::string path, resolve_external_path(base_dir, location));
    const auto expect = static_cast<int64_t>(packed_nbytes(dtype, n));
    if (dtype == DType::kString)
      return unsupported("tensor '" + p.name() + "': external string data");
    if (length >= 0 && length != expect)
      return invalid_model("tensor '" + p.name() + "': external length " + std::to_string(length) +
                           " does not match its " + std::to_string(expect) + " bytes");
    std::string err;
    auto storage = map_cached(path, &err);
    if (!storage) return io_error("tensor '" + p.name() + "': " + err);
    // Compared without adding: a hostile offset near 2^63 must not wrap around.
    if (offset < 0 || static_cast<size_t>(offset) > storage->size() ||
        static_cast<size_t>(expect) > storage->size() - static_cast<size_t>(offset))
      return invalid_model("tensor '" + p.name() + "': external data [" + std::to_string(offset) +
                           ", +" + std::to_string(expect) + ") is past the end of '" + location +
                           "'");
    if (is_subbyte(dtype))  // unpacked into memory of its own (see ir/dtype.h)
      return unpacked(
          dtype, std::move(dims),
          reinterpret_cast<const uint8_t*>(storage->data()) + static_cast<size_t>(offset));
    return Tensor(dtype, std::move(dims), storage, static_cast<size_t>(offset));
  }

  if (dtype == DType::kString) {
    if (encoding) *encoding = TensorEncoding::kTyped;
    if (p.string_data_size() != n)
      return invalid_model("tensor '" + p.name() + "' has " + std::to_string(p.string_data_size()) +
                           " strings for " + std::to_string(n) + " elements");
    return Tensor::of_strings(std::move(dims), {p.string_data().begin(), p.string_data().end()});
  }
  if (p.has_raw_data()) {
    if (encoding) *encoding = TensorEncoding::kRaw;
    const size_t expect = packed_nbytes(dtype, n);
    if (p.raw_data().size() != expect)
      return invalid_model("tensor '" + p.name() + "' has " + std::to_string(p.raw_data().size()) +
                           " bytes of raw_data, expected " + std::to_string(expect));
    if (is_subbyte(dtype))
      return unpacked(dtype, std::move(dims),
                      reinterpret_cast<const uint8_t*>(p.raw_data().data()));
    auto storage = std::make_shared<OwnedStorage>(std::move(*p.mutable_raw_data()));
    return Tensor(dtype, std::move(dims), std::move(storage));
  }
  if (encoding) *encoding = TensorEncoding::kTyped;
  // Check the payload's element count before allocating: a malformed proto must not make us
  // allocate whatever its dims claim.
  const int64_t have = typed_count(p, dtype);
  // Sub-byte types hold one packed byte per int32.
  if (is_subbyte(dtype) && static_cast<size_t>(have) != packed_nbytes(dtype, n))
    return invalid_model("tensor '" + p.name() + "' has " + std::to_string(have) +
                         " packed bytes for " + std::to_string(n) + " elements");
  if (!is_subbyte(dtype) && have != n)
    return invalid_model("tensor '" + p.name() + "' has " + std::to_string(have) + " values for " +
                         std::to_string(n) + " elements");
  Tensor t(dtype, std::move(dims));
  XOPT_RETURN_IF_ERROR(decode_typed(p, t));
  return t;
}

size_t packed_nbytes(DType t, int64_t numel) {
  return (static_cast<size_t>(numel) * static_cast<size_t>(dtype_bits(t)) + 7) / 8;
}

size_t packed_nbytes(const Tensor& t) {
  return packed_nbytes(t.dtype(), t.numel());
}

std::string packed_data(const Tensor& t) {
  if (!is_subbyte(t.dtype()))
    return std::string(static_cast<const char*>(t.raw_data()), t.nbytes());
  std::string out(packed_nbytes(t), '\0');
  const int bits = dtype_bits(t.dtype());
  const int per = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  const auto* in = static_cast<const uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i)
    out[static_cast<size_t>(i / per)] =
        static_cast<char>(static_cast<uint8_t>(out[static_cast<size_t>(i / per)]) |
                          ((in[i] & mask) << ((i % per) * bits)));
  return out;
}

onnx::TensorProto tensor_to_proto(const Tensor& t, TensorEncoding encoding) {
  onnx::TensorProto p;
  p.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.dims()) p.add_dims(d);
  if (t.dtype() == DType::kString) {
    for (const auto& s : t.strings()) p.add_string_data(s);
    return p;
  }
  if (is_subbyte(t.dtype())) {
    std::string packed = packed_data(t);
    if (encoding != TensorEncoding::kTyped) {
      p.set_raw_data(std::move(packed));
    } else {
      for (char c : packed) p.add_int32_data(static_cast<uint8_t>(c));
    }
    return p;
  }
  if (encoding != TensorEncoding::kTyped) {
    p.set_raw_data(t.raw_data(), t.nbytes());
    return p;
  }
  const auto n = t.numel();
  switch (t.dtype()) {
    case DType::kFloat:
    case DType::kComplex64: {
      const int64_t m = n * (t.dtype() == DType::kComplex64 ? 2 : 1);
      p.mutable_float_data()->Add(t.data<float>(), t.data<float>() + m);
      break;
    }
    case DType::kDouble:
    case DType::kComplex128: {
      const int64_t m = n * (t.dtype() == DType::kComplex128 ? 2 : 1);
      p.mutable_double_data()->Add(t.data<double>(), t.data<double>() + m);
      break;
    }
    case DType::kInt64:
      p.mutable_int64_data()->Add(t.data<int64_t>(), t.data<int64_t>() + n);
      break;
    case DType::kUInt32:
      for (int64_t i = 0; i < n; ++i) p.add_uint64_data(t.data<uint32_t>()[i]);
      break;
    case DType::kUInt64:
      p.mutable_uint64_data()->Add(t.data<uint64_t>(), t.data<uint64_t>() + n);
      break;
    case DType::kInt32:
      p.mutable_int32_data()->Add(t.data<int32_t>(), t.data<int32_t>() + n);
      break;
    case DType::kInt16:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<int16_t>()[i]);
      break;
    case DType::kInt8:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<int8_t>()[i]);
      break;
    case DType::kUInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0: {
      const auto* b = static_cast<const uint8_t*>(t.raw_data());
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(b[i]);
      break;
    }
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<bool>()[i] ? 1 : 0);
      break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<uint16_t>()[i]);
      break;
    default:
      p.set_raw_data(t.raw_data(), t.nbytes());
      break;
  }
  return p;
}

}  // namespace xopt::ir
