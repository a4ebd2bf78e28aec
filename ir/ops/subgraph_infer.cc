#include "ir/ops/subgraph_infer.h"

#include "ir/shape_inference.h"

namespace xopt::ir::ops {

// Types a subgraph input from the node's value where the subgraph's declaration leaves the type
// or a dim open.
void type_input(Graph& g, size_t i, DType dtype, const Shape& shape, const Value* from) {
  Value* v = g.inputs()[i];
  if (from != nullptr && !from->is_tensor()) {  // a sequence or optional: its whole type
    if (v->is_tensor() && v->dtype() == DType::kUndefined && !v->shape().has_rank())
      v->set_type(from->type());
    return;
  }
  if (v->dtype() == DType::kUndefined) v->set_dtype(dtype);
  if (!v->shape().has_rank()) {
    v->set_shape(shape);
  } else if (shape.has_rank() && shape.rank() == v->shape().rank()) {
    Shape s = v->shape();
    for (size_t d = 0; d < s.rank(); ++d)
      if (!s[d].is_known() && shape[d].is_known()) s[d] = shape[d];
    v->set_shape(std::move(s));
  }
}

Result<Subgraph> infer_subgraph(const InferenceContext& ctx, const std::string& attr,
                                const std::vector<std::pair<DType, Shape>>& input_types,
                                const std::vector<const Value*>& input_values) {
  SubgraphOptions options;
  options.inline_small_outer_constants = true;
  auto sg = load_subgraph(ctx.node(), attr, options);
  if (!sg.is_ok()) return sg.status();
  Graph& g = *sg->model.graph;
  if (input_types.size() != sg->num_formal_inputs)
    return ctx.error(attr + " has " + std::to_string(sg->num_formal_inputs) + " inputs; expected " +
                     std::to_string(input_types.size()));
  for (size_t i = 0; i < input_types.size(); ++i)
    type_input(g, i, input_types[i].first, input_types[i].second,
               i < input_values.size() ? input_values[i] : nullptr);
  Status s = infer_shapes(g);
  if (!s.is_ok()) return s.with_context(ctx.node().describe() + ": in " + attr + ": ");
  return sg;
}

}  // namespace xopt::ir::ops
