// Sequence and Optional ops: SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
// OptionalHasElement, OptionalGetElement. Their sequence and optional values carry their whole
// ONNX type (ir/value_type.h); the tensors inside get the element's dtype and, where every element
// agrees, its shape.
#include "ir/ops/op_helpers.h"
#include "ir/shape_inference.h"
#include "ir/subgraph.h"
#include "ir/value_type.h"

namespace xopt::ir::ops {
namespace {

// The shape two tensors may both have: dims that agree, unknown where they differ.
Shape join(const Shape& a, const Shape& b) {
  if (!a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return Shape();
  std::vector<Dim> dims;
  for (size_t i = 0; i < a.rank(); ++i) dims.push_back(a[i] == b[i] ? a[i] : Dim());
  return Shape(dims);
}

// The element tensor type of a sequence input (dtype and shape; unknown when not a sequence).
void seq_elem(const InferenceContext& ctx, size_t i, DType* dtype, Shape* shape) {
  *dtype = DType::kUndefined;
  *shape = Shape();
  if (!ctx.has_input(i) || !ctx.input(i)->type().has_sequence_type()) return;
  parse_tensor_type(ctx.input(i)->type().sequence_type().elem_type(), dtype, shape);
}

Status require_sequence(const InferenceContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return ctx.error(std::string(what) + " is missing");
  const Value* v = ctx.input(i);
  // An untyped value (a subgraph input nobody typed) may still hold a sequence at run time.
  if (v->is_tensor() && (v->dtype() != DType::kUndefined || v->shape().has_rank()))
    return ctx.error(std::string(what) + " '" + v->name() + "' is " + type_to_string(*v) +
                     ", not a sequence");
  return Status::ok();
}

// A position input (SequenceAt, SequenceInsert, SequenceErase): a scalar int32 or int64.
Status check_position(const InferenceContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return Status::ok();
  const DType d = ctx.input_dtype(i);
  if (d != DType::kUndefined && d != DType::kInt32 && d != DType::kInt64)
    return ctx.error("position must be int32 or int64, not " + std::string(dtype_name(d)));
  const Shape& s = ctx.input_shape(i);
  if (s.has_rank() && s.rank() != 0 && !(s.rank() == 1 && s[0].is_known() && s[0].value == 1))
    return ctx.error("position must be a scalar, not " + str(s));
  return Status::ok();
}

// The integer content of a value known before running: an initializer (also one that is an
// overridable graph input: its default, as InferenceContext::input_constant takes it), a Constant
// node, or shape arithmetic that inference followed.
std::optional<std::vector<int64_t>> known_ints(const Value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->initializer() != nullptr && is_integer(v->initializer()->dtype()))
    return v->initializer()->to_int64_vector();
  if (v->producer() != nullptr && v->producer()->is("Constant")) {
    Tensor t = v->producer()->attr_tensor("value");
    if (!t.empty() && is_integer(t.dtype())) return t.to_int64_vector();
    return std::nullopt;
  }
  if (!v->shape_data()) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *v->shape_data()) {
    if (!d.is_known()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

// A position (at, insert, erase) made non-negative against `n` elements; nullopt when out of range.
std::optional<size_t> known_position(int64_t pos, size_t n, bool end_ok) {
  const auto sn = static_cast<int64_t>(n);
  if (pos < -sn || pos > (end_ok ? sn : sn - 1)) return std::nullopt;
  return static_cast<size_t>(pos < 0 ? pos + sn : pos);
}

// The shapes of a sequence's elements, in order, when the ops that built it determine them:
// SequenceEmpty, SequenceConstruct, SplitToSequence of an input whose split axis is known (split
// constant or absent), and SequenceInsert / SequenceErase / Identity of such a sequence with
// constant positions. nullopt otherwise (a Loop, a graph input, a data-dependent position). Lets
// SplitToSequence -> ConcatFromSequence keep a static shape, so the planner can place it.
std::optional<std::vector<Shape>> known_elements(const Value* v, int depth = 0) {
  if (v == nullptr || v->producer() == nullptr || depth > 64) return std::nullopt;
  const Node& n = *v->producer();
  if (n.is("SequenceEmpty")) return std::vector<Shape>{};
  if (n.is("SequenceConstruct")) {
    std::vector<Shape> out;
    for (const Value* in : n.inputs()) {
      if (in == nullptr) return std::nullopt;
      out.push_back(in->shape());
    }
    return out;
  }
  if (n.is("Identity")) return known_elements(n.input(0), depth + 1);
  if (n.is("SequenceInsert") || n.is("SequenceErase")) {
    auto elems = known_elements(n.input(0), depth + 1);
    if (!elems) return std::nullopt;
    const bool insert = n.is("SequenceInsert");
    const Value* pos_v = n.input(insert ? 2 : 1);
    int64_t pos = insert ? static_cast<int64_t>(elems->size()) : -1;
    if (pos_v != nullptr) {
      auto p = known_ints(pos_v);
      if (!p || p->size() != 1) return std::nullopt;
      pos = (*p)[0];
    }
    auto at = known_position(pos, elems->size(), insert);
    if (!at) return std::nullopt;
    if (insert) {
      if (n.input(1) == nullptr) return std::nullopt;
      elems->insert(elems->begin() + static_cast<std::ptrdiff_t>(*at), n.input(1)->shape());
    } else {
      elems->erase(elems->begin() + static_cast<std::ptrdiff_t>(*at));
    }
    return elems;
  }
  if (n.is("SplitToSequence")) {
    const Value* x = n.input(0);
    if (x == nullptr || !x->shape().has_rank() || x->shape().rank() == 0) return std::nullopt;
    const auto rank = static_cast<int64_t>(x->shape().rank());
    int64_t axis = n.attr_int("axis", 0);
    if (axis < -rank || axis >= rank) return std::nullopt;
    const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    const Dim len = x->shape()[a];
    if (!len.is_known()) return std::nullopt;
    std::vector<int64_t> lengths;
    bool squeeze = false;
    if (const Value* sv = n.input(1)) {
      auto split = known_ints(sv);
      if (!split || !sv->shape().has_rank() || sv->shape().rank() > 1) return std::nullopt;
      if (sv->shape().rank() == 0) {
        if (split->size() != 1 || (*split)[0] <= 0) return std::nullopt;
        for (int64_t at = 0; at < len.value; at += (*split)[0])
          lengths.push_back(std::min((*split)[0], len.value - at));
      } else {
        lengths = *split;
      }
    } else {
      lengths.assign(static_cast<size_t>(len.value), 1);
      squeeze = n.attr_int("keepdims", 1) == 0;
    }
    std::vector<Shape> out;
    for (int64_t l : lengths) {
      std::vector<Dim> dims = x->shape().dims();
      if (squeeze)
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(a));
      else
        dims[a] = Dim(l);
      out.emplace_back(std::move(dims));
    }
    return out;
  }
  return std::nullopt;
}

// The element shape a sequence's type records: the join of the known elements.
Shape join_all(const std::vector<Shape>& shapes) {
  if (shapes.empty()) return Shape();
  Shape s = shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i) s = join(s, shapes[i]);
  return s;
}

Status infer_sequence_construct(InferenceContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.error("needs at least one input");
  DType dtype = DType::kUndefined;
  Shape shape;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    const DType d = ctx.input_dtype(i);
    if (dtype != DType::kUndefined && d != DType::kUndefined && d != dtype)
      return ctx.error("inputs mix " + std::string(dtype_name(dtype)) + " and " +
                       std::string(dtype_name(d)));
    if (d != DType::kUndefined) dtype = d;
    shape = i == 0 ? ctx.input_shape(i) : join(shape, ctx.input_shape(i));
  }
  ctx.set_output_type(0, sequence_type(tensor_type(dtype, shape)));
  return Status::ok();
}

Status infer_sequence_empty(InferenceContext& ctx) {
  const auto dtype = static_cast<DType>(ctx.node().attr_int("dtype", 1));
  ctx.set_output_type(0, sequence_type(tensor_type(dtype, Shape())));
  return Status::ok();
}

Status infer_sequence_insert(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 3));
  XOPT_RETURN_IF_ERROR(require_sequence(ctx, 0, "input_sequence"));
  XOPT_RETURN_IF_ERROR(check_position(ctx, 2));
  DType dtype;
  Shape shape;
  seq_elem(ctx, 0, &dtype, &shape);
  const DType d = ctx.input_dtype(1);
  if (dtype != DType::kUndefined && d != DType::kUndefined && d != dtype)
    return ctx.error("inserts " + std::string(dtype_name(d)) + " into a sequence of " +
                     std::string(dtype_name(dtype)));
  if (dtype == DType::kUndefined) dtype = d;
  // The sequence from SequenceEmpty says nothing about shapes; a later insert cannot be assumed to
  // agree with earlier ones either, so only a sequence typed with a shape keeps its join.
  shape = shape.has_rank() ? join(shape, ctx.input_shape(1)) : Shape();
  if (auto elems = known_elements(ctx.node().output(0))) shape = join_all(*elems);
  ctx.set_output_type(0, sequence_type(tensor_type(dtype, shape)));
  return Status::ok();
}

Status infer_sequence_at(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  XOPT_RETURN_IF_ERROR(require_sequence(ctx, 0, "input_sequence"));
  XOPT_RETURN_IF_ERROR(check_position(ctx, 1));
  DType dtype;
  Shape shape;
  seq_elem(ctx, 0, &dtype, &shape);
  if (auto elems = known_elements(ctx.input(0))) {
    const auto pos = ctx.input_ints(1);
    if (pos && pos->size() == 1) {
      const auto at = known_position((*pos)[0], elems->size(), false);
      if (!at)
        return ctx.error("position " + std::to_string((*pos)[0]) +
                         " is out of range for a sequence of " + std::to_string(elems->size()));
      shape = (*elems)[*at];
    }
  }
  ctx.set_output(0, dtype, shape);
  return Status::ok();
}

Status infer_sequence_erase(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 2));
  XOPT_RETURN_IF_ERROR(require_sequence(ctx, 0, "input_sequence"));
  XOPT_RETURN_IF_ERROR(check_position(ctx, 1));
  DType dtype;
  Shape shape;
  seq_elem(ctx, 0, &dtype, &shape);
  if (auto elems = known_elements(ctx.node().output(0)); elems && !elems->empty())
    shape = join_all(*elems);
  ctx.set_output_type(0, sequence_type(tensor_type(dtype, shape)));
  return Status::ok();
}

Status infer_sequence_length(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  XOPT_RETURN_IF_ERROR(require_sequence(ctx, 0, "input_sequence"));
  ctx.set_output(0, DType::kInt64, Shape::scalar());
  if (auto elems = known_elements(ctx.input(0)))
    ctx.set_output_data(0, {SymInt::known(static_cast<int64_t>(elems->size()))});
  return Status::ok();
}

Status infer_split_to_sequence(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 2));
  const Shape& in = ctx.input_shape(0);
  const DType dtype = ctx.input_dtype(0);
  if (!in.has_rank()) {
    ctx.set_output_type(0, sequence_type(tensor_type(dtype, Shape())));
    return Status::ok();
  }
  const auto rank = static_cast<int64_t>(in.rank());
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), rank, "axis"));
  std::vector<Dim> dims = in.dims();
  const auto a = static_cast<size_t>(axis);
  if (ctx.has_input(1)) {
    const Shape& ss = ctx.input_shape(1);
    if (ss.has_rank() && ss.rank() > 1) return ctx.error("split must be a scalar or 1-D");
    const auto split = ctx.input_ints(1);
    if (split && ss.has_rank() && ss.rank() == 0 && split->size() == 1) {
      // Chunks of that size, the last possibly shorter.
      const int64_t chunk = (*split)[0];
      if (chunk <= 0) return ctx.error("split must be positive");
      if (dims[a].is_known() && dims[a].value % chunk != 0)
        dims[a] = Dim();
      else
        dims[a] = Dim(chunk);
    } else if (split && ss.has_rank() && ss.rank() == 1) {
      int64_t sum = 0;
      bool same = !split->empty();
      for (int64_t s : *split) {
        if (s < 0) return ctx.error("split has a negative length");
        sum += s;
        same = same && s == (*split)[0];
      }
      if (dims[a].is_known() && dims[a].value != sum)
        return ctx.error("split sums to " + std::to_string(sum) + " but axis " +
                         std::to_string(axis) + " has " + std::to_string(dims[a].value));
      dims[a] = same ? Dim((*split)[0]) : Dim();
    } else {
      dims[a] = Dim();
    }
  } else if (ctx.node().attr_int("keepdims", 1) != 0) {
    dims[a] = Dim(1);
  } else {
    dims.erase(dims.begin() + axis);
  }
  Shape shape(dims);
  if (auto elems = known_elements(ctx.node().output(0)); elems && !elems->empty())
    shape = join_all(*elems);
  ctx.set_output_type(0, sequence_type(tensor_type(dtype, shape)));
  return Status::ok();
}

Status infer_concat_from_sequence(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  XOPT_RETURN_IF_ERROR(require_sequence(ctx, 0, "input_sequence"));
  if (!ctx.node().has_attr("axis")) return ctx.error("attribute 'axis' is required");
  DType dtype;
  Shape elem;
  seq_elem(ctx, 0, &dtype, &elem);
  const bool new_axis = ctx.node().attr_int("new_axis", 0) != 0;
  if (!elem.has_rank()) {
    ctx.set_output(0, dtype, Shape());
    return Status::ok();
  }
  const auto rank = static_cast<int64_t>(elem.rank()) + (new_axis ? 1 : 0);
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), rank, "axis"));
  std::vector<Dim> dims = elem.dims();
  auto elems = known_elements(ctx.input(0));
  if (elems && elems->empty()) return ctx.error("concatenates an empty sequence");
  if (elems) {
    for (const Shape& e : *elems)
      if (!e.has_rank() || e.rank() != elem.rank()) elems.reset();
  }
  if (new_axis) {
    dims.insert(dims.begin() + axis, elems ? Dim(static_cast<int64_t>(elems->size())) : Dim());
  } else {
    // The sum over the elements: known when every element's length there is.
    Dim sum(0);
    for (size_t k = 0; elems && k < elems->size(); ++k) {
      const Dim& d = (*elems)[k][static_cast<size_t>(axis)];
      sum = d.is_known() && sum.is_known() ? Dim(sum.value + d.value) : Dim();
    }
    dims[static_cast<size_t>(axis)] = elems ? sum : Dim();
  }
  ctx.set_output(0, dtype, Shape(dims));
  return Status::ok();
}

// The body runs once per element of the sequence inputs (tensor inputs are the same each time);
// each output is a sequence of what the body computes.
Status infer_sequence_map(InferenceContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.error("input_sequence is missing");
  XOPT_RETURN_IF_ERROR(require_sequence(ctx, 0, "input_sequence"));
  SubgraphOptions options;
  options.inline_small_outer_constants = true;
  XOPT_ASSIGN_OR_RETURN(Subgraph sg, load_subgraph(ctx.node(), "body", options));
  Graph& g = *sg.model.graph;
  if (sg.num_formal_inputs != ctx.num_inputs())
    return ctx.error("body has " + std::to_string(sg.num_formal_inputs) +
                     " inputs but the node has " + std::to_string(ctx.num_inputs()));
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    Value* bi = g.inputs()[i];
    if (bi->dtype() != DType::kUndefined || bi->shape().has_rank() || !bi->is_tensor()) continue;
    DType d;
    Shape s;
    if (ctx.has_input(i) && ctx.input(i)->type().has_sequence_type()) {
      seq_elem(ctx, i, &d, &s);
    } else {
      d = ctx.input_dtype(i);
      s = ctx.input_shape(i);
    }
    bi->set_dtype(d);
    bi->set_shape(s);
  }
  Status st = infer_shapes(g);
  if (!st.is_ok()) return st.with_context(ctx.node().describe() + ": in body: ");
  const auto& outs = g.outputs();
  if (outs.size() != ctx.num_outputs())
    return ctx.error("body has " + std::to_string(outs.size()) + " outputs but the node has " +
                     std::to_string(ctx.num_outputs()));
  for (size_t i = 0; i < outs.size(); ++i)
    ctx.set_output_type(i, sequence_type(value_type(*outs[i])));
  return Status::ok();
}

Status infer_optional(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 0, 1));
  if (ctx.has_input(0)) {
    ctx.set_output_type(0, optional_type(value_type(*ctx.input(0))));
    return Status::ok();
  }
  const onnx::AttributeProto* type = ctx.node().attr("type");
  if (type == nullptr || !type->has_tp())
    return ctx.error("an Optional without input needs the 'type' attribute");
  ctx.set_output_type(0, optional_type(type->tp()));
  return Status::ok();
}

Status infer_optional_has_element(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, ctx.opset() < 18 ? 1 : 0, 1));
  if (ctx.opset() < 18 && ctx.input(0)->is_tensor() && ctx.input_dtype(0) != DType::kUndefined)
    return ctx.error("input must be an optional at opset " + std::to_string(ctx.opset()));
  ctx.set_output(0, DType::kBool, Shape::scalar());
  return Status::ok();
}

Status infer_optional_get_element(InferenceContext& ctx) {
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 1, 1));
  const Value* v = ctx.input(0);
  if (v->type().has_optional_type()) {
    ctx.set_output_type(0, v->type().optional_type().elem_type());
    return Status::ok();
  }
  if (ctx.opset() < 18 && v->is_tensor() && v->dtype() != DType::kUndefined)
    return ctx.error("input must be an optional at opset " + std::to_string(ctx.opset()));
  ctx.set_output_type(0, value_type(*v));  // 18+: a tensor or sequence passes through
  return Status::ok();
}

}  // namespace

void register_sequence_ops(OpList& ops) {
  ops.push_back(make_op("SequenceConstruct", 11, kMaxOpset, infer_sequence_construct));
  ops.push_back(make_op("SequenceEmpty", 11, kMaxOpset, infer_sequence_empty));
  ops.push_back(make_op("SequenceInsert", 11, kMaxOpset, infer_sequence_insert));
  ops.push_back(make_op("SequenceAt", 11, kMaxOpset, infer_sequence_at));
  ops.push_back(make_op("SequenceErase", 11, kMaxOpset, infer_sequence_erase));
  ops.push_back(make_op("SequenceLength", 11, kMaxOpset, infer_sequence_length));
  ops.push_back(make_op("SplitToSequence", 11, kMaxOpset, infer_split_to_sequence));
  ops.push_back(make_op("ConcatFromSequence", 11, kMaxOpset, infer_concat_from_sequence));
  ops.push_back(make_op("SequenceMap", 17, kMaxOpset, infer_sequence_map));
  ops.push_back(make_op("Optional", 15, kMaxOpset, infer_optional));
  ops.push_back(make_op("OptionalHasElement", 15, kMaxOpset, infer_optional_has_element));
  ops.push_back(make_op("OptionalGetElement", 15, kMaxOpset, infer_optional_get_element));
}

}  // namespace xopt::ir::ops
