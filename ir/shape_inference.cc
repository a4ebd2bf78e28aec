#include "ir/shape_inference.h"
#include "ir/dims_string.h"

#include <unordered_set>

#include "ir/op_registry.h"
#include "ir/value_type.h"

namespace xopt::ir {
namespace {

// Where inference could not tell a dim (or the rank), the value keeps what it had: the model's
// declared value_info, which exporters write for data-dependent outputs.
Shape merge_shapes(const Shape& inferred, const Shape& previous) {
  if (!inferred.has_rank()) return previous;
  if (!previous.has_rank() || previous.rank() != inferred.rank()) return inferred;
  Shape out = inferred;
  for (size_t i = 0; i < out.rank(); ++i) {
    const Dim& p = previous[i];
    Dim& d = out[i];
    if (!d.is_known() && !d.is_symbolic()) d = p;
  }
  return out;
}

// The same for sequence and optional types: the inferred structure, with the element dims (and
// element type) inference left open taken from what the value declared.
onnx::TypeProto merge_types(const onnx::TypeProto& inferred, const onnx::TypeProto& previous) {
  if (type_kind(inferred) != type_kind(previous)) return inferred;
  onnx::TypeProto out = inferred;
  if (inferred.has_sequence_type())
    *out.mutable_sequence_type()->mutable_elem_type() =
        merge_types(inferred.sequence_type().elem_type(), previous.sequence_type().elem_type());
  else if (inferred.has_optional_type())
    *out.mutable_optional_type()->mutable_elem_type() =
        merge_types(inferred.optional_type().elem_type(), previous.optional_type().elem_type());
  else if (inferred.has_tensor_type() && previous.has_tensor_type()) {
    DType d, pd;
    Shape s, ps;
    parse_tensor_type(inferred, &d, &s);
    parse_tensor_type(previous, &pd, &ps);
    out = tensor_type(d != DType::kUndefined ? d : pd, merge_shapes(s, ps));
  }
  return out;
}

// Propagated data as Value::shape_data: only when every element is a dimension-like value.
std::optional<std::vector<Dim>> as_shape_data(const SymData& data) {
  std::vector<Dim> out;
  out.reserve(data.size());
  for (const SymInt& e : data) {
    if (e.is_known() && *e.value < 0) return std::nullopt;
    out.push_back(e.to_dim());
  }
  return out;
}

// A graph output whose declared element type or rank the computing node contradicts is a broken
// model (ONNX's strict inference refuses it too); declared dims that differ are left to the
// inferred ones, as for any value.
Status check_declared_output(const Node& node, const Value& v, DType dtype, const Shape& shape) {
  const bool dtype_differs =
      dtype != DType::kUndefined && v.dtype() != DType::kUndefined && dtype != v.dtype();
  const bool rank_differs =
      shape.has_rank() && v.shape().has_rank() && shape.rank() != v.shape().rank();
  if (!dtype_differs && !rank_differs) return Status::ok();
  const DType shown = dtype == DType::kUndefined ? v.dtype() : dtype;
  return invalid_model(node.describe() + ": graph output '" + v.name() + "' is declared " +
                       std::string(dtype_name(v.dtype())) + v.shape().to_string() +
                       " but the node computes " + std::string(dtype_name(shown)) +
                       (shape.has_rank() ? shape.to_string() : std::string("[?]")));
}

}  // namespace

Status bind_input_shapes(Graph& graph, const ShapeBindings& bindings) {
  std::vector<Value*> inputs = graph.runtime_inputs();
  auto names = [&] {
    std::string s;
    for (const Value* v : inputs) s += (s.empty() ? "" : ", ") + v->name();
    return s;
  };
  // Symbol values learnt from the bindings apply to every input that uses the same symbol.
  std::map<std::string, int64_t> symbols;
  auto learn = [&](const Value* v, const Dim& d, int64_t value) -> Status {
    if (!d.is_symbolic()) return Status::ok();
    auto [it, fresh] = symbols.emplace(d.symbol, value);
    if (!fresh && it->second != value)
      return invalid_argument("input '" + v->name() + "': dimension '" + d.symbol +
                              "' is bound to " + std::to_string(value) + " but also to " +
                              std::to_string(it->second));
    return Status::ok();
  };
  for (const auto& [name, dims] : bindings.input_shapes) {
    Value* v = nullptr;
    for (Value* in : inputs)
      if (in->name() == name) v = in;
    if (v == nullptr)
      return invalid_argument("--input-shape: the model has no input '" + name +
                              "' (inputs: " + names() + ")");
    for (int64_t d : dims)
      if (d < 0) return invalid_argument("--input-shape " + name + ": negative dimension");
    const Shape& s = v->shape();
    if (s.has_rank()) {
      if (s.rank() != dims.size())
        return invalid_argument("--input-shape " + name + "=" + dims_string(dims) +
                                ": the input has rank " + std::to_string(s.rank()) + " " +
                                s.to_string());
      for (size_t i = 0; i < dims.size(); ++i) {
        if (s[i].is_known() && s[i].value != dims[i])
          return invalid_argument("--input-shape " + name + "=" + dims_string(dims) +
                                  ": dimension " + std::to_string(i) + " is fixed to " +
                                  std::to_string(s[i].value) + " by the model " + s.to_string());
        XOPT_RETURN_IF_ERROR(learn(v, s[i], dims[i]));
      }
    }
    v->set_shape(Shape::of(dims));
  }
  if (bindings.batch) {
    if (*bindings.batch <= 0) return invalid_argument("--batch must be positive");
    for (Value* v : inputs) {
      if (bindings.input_shapes.count(v->name()) || !v->shape().has_rank() ||
          v->shape().rank() == 0)
        continue;
      Shape s = v->shape();
      if (s[0].is_known()) continue;
      XOPT_RETURN_IF_ERROR(learn(v, s[0], *bindings.batch));
      s[0] = *bindings.batch;
      v->set_shape(std::move(s));
    }
  }
  for (Value* v : inputs) {
    if (!v->shape().has_rank()) continue;
    Shape s = v->shape();
    for (Dim& d : s.mutable_dims()) {
      if (!d.is_symbolic()) continue;
      auto it = symbols.find(d.symbol);
      if (it != symbols.end()) d = it->second;
    }
    v->set_shape(std::move(s));
  }
  return Status::ok();
}

Status infer_shapes(Graph& graph, const InferOptions& options) {
  KnownValues known;
  for (Node* node : graph.nodes()) {
    const OpInfo* op = find_op(*node);
    if (op == nullptr) {
      if (options.strict)
        return unsupported(node->describe() + ": no shape inference for " +
                           (node->domain().empty() ? "" : node->domain() + ".") + node->op_type() +
                           " at opset " + std::to_string(node->opset()));
      for (Value* out : node->outputs())
        if (out != nullptr) out->set_shape_data(std::nullopt);
      continue;
    }
    InferenceContext ctx(*node, known);
    Status s = op->infer(ctx);
    if (!s.is_ok()) {
      // Something well-formed that xopt does not model (a float8 Cast): like an unknown op.
      if (s.code() != ErrorCode::kUnsupported || options.strict) return s;
      for (Value* out : node->outputs())
        if (out != nullptr) out->set_shape_data(std::nullopt);
      continue;
    }
    const auto& results = ctx.outputs();
    for (size_t i = 0; i < results.size(); ++i) {
      Value* v = node->output(i);
      if (v == nullptr) continue;
      const auto& r = results[i];
      if (r.type) v->set_type(v->is_tensor() ? *r.type : merge_types(*r.type, v->type()));
      if (r.set) {
        if (r.shape.has_rank())
          for (const Dim& d : r.shape.dims())
            if (d.is_known() && d.value > kMaxDim)
              return invalid_model(node->describe() + ": output '" + v->name() +
                                   "' would have shape " + r.shape.to_string() +
                                   ", a dim past xopt's limit of 2^40");
        if (v->is_graph_output())
          XOPT_RETURN_IF_ERROR(check_declared_output(*node, *v, r.dtype, r.shape));
        if (r.dtype != DType::kUndefined) v->set_dtype(r.dtype);
        v->set_shape(merge_shapes(r.shape, v->shape()));
      }
      if (r.data) {
        known.data[v] = *r.data;
        v->set_shape_data(as_shape_data(*r.data));
      } else {
        v->set_shape_data(std::nullopt);
      }
      if (r.constant) known.constants[v] = *r.constant;
    }
  }
  return Status::ok();
}

std::vector<const Value*> values_with_unknown_shape(const Graph& graph) {
  std::vector<const Value*> out;
  std::unordered_set<const Value*> seen;
  auto check = [&](const Value* v) {
    if (v == nullptr || !v->is_tensor() || !seen.insert(v).second) return;
    if (!v->shape().is_static()) out.push_back(v);
  };
  for (const Value* v : graph.runtime_inputs()) check(v);
  for (const Node* n : graph.nodes())
    for (const Value* v : n->outputs()) check(v);
  for (const Value* v : graph.outputs()) check(v);
  return out;
}

}  // namespace xopt::ir
