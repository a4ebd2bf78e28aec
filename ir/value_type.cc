#include "ir/value_type.h"

namespace xopt::ir {

TypeKind type_kind(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::VALUE_NOT_SET:
    case onnx::TypeProto::kTensorType:
      return TypeKind::kTensor;
    case onnx::TypeProto::kSequenceType:
      return TypeKind::kSequence;
    case onnx::TypeProto::kOptionalType:
      return TypeKind::kOptional;
    case onnx::TypeProto::kMapType:
      return TypeKind::kMap;
    case onnx::TypeProto::kSparseTensorType:
      return TypeKind::kSparseTensor;
    default:
      return TypeKind::kOther;
  }
}

TypeKind type_kind(const Value& v) {
  return v.is_tensor() ? TypeKind::kTensor : type_kind(v.type());
}

const char* type_kind_name(TypeKind k) {
  switch (k) {
    case TypeKind::kTensor:
      return "tensor";
    case TypeKind::kSequence:
      return "sequence";
    case TypeKind::kOptional:
      return "optional";
    case TypeKind::kMap:
      return "map";
    case TypeKind::kSparseTensor:
      return "sparse tensor";
    case TypeKind::kOther:
      break;
  }
  return "other";
}

onnx::TypeProto tensor_type(DType dtype, const Shape& shape) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  if (dtype != DType::kUndefined) tt->set_elem_type(static_cast<int32_t>(dtype));
  if (shape.has_rank()) {
    auto* sp = tt->mutable_shape();
    for (const Dim& d : shape.dims()) {
      auto* pd = sp->add_dim();
      if (d.is_known())
        pd->set_dim_value(d.value);
      else if (d.is_symbolic())
        pd->set_dim_param(d.symbol);
    }
  }
  return t;
}

onnx::TypeProto sequence_type(const onnx::TypeProto& elem) {
  onnx::TypeProto t;
  *t.mutable_sequence_type()->mutable_elem_type() = elem;
  return t;
}

onnx::TypeProto optional_type(const onnx::TypeProto& elem) {
  onnx::TypeProto t;
  *t.mutable_optional_type()->mutable_elem_type() = elem;
  return t;
}

onnx::TypeProto value_type(const Value& v) {
  if (!v.is_tensor()) return v.type();
  return tensor_type(v.dtype(), v.shape());
}

const onnx::TypeProto& element_type(const onnx::TypeProto& t) {
  if (t.has_sequence_type()) return t.sequence_type().elem_type();
  if (t.has_optional_type()) return t.optional_type().elem_type();
  return t;
}

DType innermost_dtype(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return static_cast<DType>(t.tensor_type().elem_type());
  if (t.has_sequence_type()) return innermost_dtype(t.sequence_type().elem_type());
  if (t.has_optional_type()) return innermost_dtype(t.optional_type().elem_type());
  return DType::kUndefined;
}

void parse_tensor_type(const onnx::TypeProto& t, DType* dtype, Shape* shape) {
  *dtype = DType::kUndefined;
  *shape = Shape();
  if (!t.has_tensor_type()) return;
  *dtype = static_cast<DType>(t.tensor_type().elem_type());
  if (!t.tensor_type().has_shape()) return;
  std::vector<Dim> dims;
  for (const auto& d : t.tensor_type().shape().dim()) {
    // "?", an empty dim_param and a negative dim_value are each an unknown dim of its own, never a
    // symbol shared with other dims (exporters such as Paddle2ONNX write "?" for "any").
    if (d.has_dim_value() && d.dim_value() >= 0)
      dims.emplace_back(d.dim_value());
    else if (d.has_dim_param() && !d.dim_param().empty() && d.dim_param() != "?")
      dims.push_back(Dim::symbolic(d.dim_param()));
    else
      dims.emplace_back();
  }
  *shape = Shape(std::move(dims));
}

std::string type_to_string(const onnx::TypeProto& t) {
  switch (type_kind(t)) {
    case TypeKind::kTensor: {
      DType d;
      Shape s;
      parse_tensor_type(t, &d, &s);
      std::string out = d == DType::kUndefined ? "tensor" : std::string(dtype_name(d));
      return s.has_rank() ? out + s.to_string() : out;
    }
    case TypeKind::kSequence:
      return "seq(" + type_to_string(t.sequence_type().elem_type()) + ")";
    case TypeKind::kOptional:
      return "optional(" + type_to_string(t.optional_type().elem_type()) + ")";
    case TypeKind::kMap:
      return "map(" + std::string(dtype_name(static_cast<DType>(t.map_type().key_type()))) + ", " +
             type_to_string(t.map_type().value_type()) + ")";
    case TypeKind::kSparseTensor:
      return "sparse_tensor";
    case TypeKind::kOther:
      break;
  }
  return "other";
}

std::string type_to_string(const Value& v) {
  return type_to_string(value_type(v));
}

bool same_type(const onnx::TypeProto& a, const onnx::TypeProto& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace xopt::ir
