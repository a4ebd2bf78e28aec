// Conversion between onnx::TensorProto and Tensor, including ONNX external data.
#pragma once

#include <string>

#include "common/status.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace xopt::ir {

// How an initializer's payload was stored in the file, so that an untouched tensor saves the same
// way.
enum class TensorEncoding { kRaw = 0, kTyped = 1, kExternal = 2 };

// Decodes a tensor. External data is resolved against `base_dir` (see resolve_external_path) and
// memory-mapped, never copied. `p` is taken by value so raw_data can be moved out without a copy.
Result<Tensor> tensor_from_proto(onnx::TensorProto p, const std::string& base_dir,
                                 TensorEncoding* encoding = nullptr);
// Encodes a tensor with its payload inline: raw_data, or typed fields when `encoding` is kTyped.
onnx::TensorProto tensor_to_proto(const Tensor& t, TensorEncoding encoding = TensorEncoding::kRaw);

// Bytes of a tensor's payload in ONNX's serialized form (raw_data, external data): the sub-byte
// types are packed there (ir/dtype.h), every other type is its in-memory size.
size_t packed_nbytes(DType t, int64_t numel);
size_t packed_nbytes(const Tensor& t);
// That payload: the in-memory bytes, packed for the sub-byte types.
std::string packed_data(const Tensor& t);

// Resolves an external-data `location` against the model folder and refuses anything that escapes
// it: absolute paths, "..", and symbolic links pointing outside. Returns the resolved path.
Result<std::string> resolve_external_path(const std::string& base_dir, const std::string& location);

}  // namespace xopt::ir
