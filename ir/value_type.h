// ONNX value types beyond tensors: sequences and optionals (and maps, which xopt carries but does
// not run). A Value that is not a tensor keeps its whole onnx::TypeProto (Value::type()), so the
// element types and shapes nest as deeply as ONNX allows and save back unchanged; tensors keep
// their dtype and shape as before. These helpers read and build such types.
#pragma once

#include <string>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace xopt::ir {

enum class TypeKind { kTensor, kSequence, kOptional, kMap, kSparseTensor, kOther };

// VALUE_NOT_SET (an untyped value) counts as a tensor.
TypeKind type_kind(const onnx::TypeProto& t);
TypeKind type_kind(const Value& v);
const char* type_kind_name(TypeKind k);

// A tensor type (elem_type left unset when undefined, shape when rank unknown).
onnx::TypeProto tensor_type(DType dtype, const Shape& shape);
onnx::TypeProto sequence_type(const onnx::TypeProto& elem);
onnx::TypeProto optional_type(const onnx::TypeProto& elem);
// The value's full type: type() for sequences and optionals, else built from dtype() and shape().
onnx::TypeProto value_type(const Value& v);
// The element type of a sequence or optional type (a tensor type for anything else).
const onnx::TypeProto& element_type(const onnx::TypeProto& t);
// The dtype of the innermost tensor type (seq(optional(float[2])) -> float); undefined if none.
DType innermost_dtype(const onnx::TypeProto& t);

// Dtype and shape of a tensor type; undefined and unknown rank when not a tensor type.
void parse_tensor_type(const onnx::TypeProto& t, DType* dtype, Shape* shape);

// "float[2,3]", "seq(float[?,3])", "optional(seq(int64))", for messages.
std::string type_to_string(const onnx::TypeProto& t);
std::string type_to_string(const Value& v);

// Same type, field for field.
bool same_type(const onnx::TypeProto& a, const onnx::TypeProto& b);

}  // namespace xopt::ir
