#include "ir/subgraph.h"

#include <optional>
#include <set>
#include <unordered_set>

#include "ir/onnx_io.h"
#include "ir/tensor_proto.h"

namespace xopt::ir {

namespace {

void set_type(const Value& v, onnx::ValueInfoProto& vi) {
  if (!v.is_tensor()) {
    *vi.mutable_type() = v.type();
    return;
  }
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(v.dtype()));
  if (!v.shape().has_rank()) return;
  auto* sp = tt->mutable_shape();
  for (const Dim& d : v.shape().dims()) {
    auto* pd = sp->add_dim();
    if (d.is_known())
      pd->set_dim_value(d.value);
    else if (d.is_symbolic())
      pd->set_dim_param(d.symbol);
  }
}

// The value of a small constant (initializer that is not a graph input, or Constant node output).
std::optional<Tensor> small_constant(const Value& v) {
  std::optional<Tensor> t;
  if (v.is_constant()) {
    t = *v.initializer();
  } else if (v.producer() != nullptr && v.producer()->is("Constant")) {
    const Node& c = *v.producer();
    if (c.has_attr("value")) {
      t = c.attr_tensor("value");
    } else if (c.has_attr("value_ints")) {
      const auto ints = c.attr_ints("value_ints");
      t = Tensor::of<int64_t>({static_cast<int64_t>(ints.size())}, ints);
    } else if (c.has_attr("value_int")) {
      t = Tensor::scalar<int64_t>(c.attr_int("value_int", 0));
    } else if (c.has_attr("value_float")) {
      t = Tensor::scalar<float>(c.attr_float("value_float", 0));
    } else if (c.has_attr("value_floats")) {
      const auto fs = c.attr_floats("value_floats");
      t = Tensor::of<float>({static_cast<int64_t>(fs.size())}, fs);
    }
  }
  // Integer values shape inference computed (shape arithmetic: Shape, Gather, Concat, ...).
  if (!t && v.shape_data() && v.shape().is_static() &&
      (v.dtype() == DType::kInt64 || v.dtype() == DType::kInt32)) {
    std::vector<int64_t> values;
    for (const Dim& d : *v.shape_data()) {
      if (!d.is_known()) return std::nullopt;
      values.push_back(d.value);
    }
    const std::vector<int64_t> dims = v.shape().static_dims();
    if (static_cast<int64_t>(values.size()) != numel(dims)) return std::nullopt;
    if (v.dtype() == DType::kInt64) {
      t = Tensor::of<int64_t>(dims, values);
    } else {
      t = Tensor::of<int32_t>(dims, std::vector<int32_t>(values.begin(), values.end()));
    }
  }
  if (!t || t->empty() || t->dtype() == DType::kString || t->numel() > kMaxInlinedElements)
    return std::nullopt;
  return t;
}

}  // namespace

Result<Subgraph> load_subgraph(const Node& node, const onnx::GraphProto& graph,
                               const SubgraphOptions& options) {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  for (const auto& [domain, version] : node.graph()->opset_imports()) {
    auto* op = proto.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  onnx::GraphProto* g = proto.mutable_graph();
  *g = graph;
  Subgraph sg;
  sg.num_formal_inputs = static_cast<size_t>(g->input_size());
  if (options.drop_input_shapes)
    for (auto& in : *g->mutable_input())
      if (in.type().has_tensor_type()) in.mutable_type()->mutable_tensor_type()->clear_shape();
  std::set<std::string> seen;
  collect_outer_reads(graph, {}, sg.outer_names, seen);
  std::vector<std::string> outer;
  for (const std::string& name : sg.outer_names) {
    const Value* v = node.graph()->find_value(name);
    if (options.inline_small_outer_constants && v != nullptr) {
      std::optional<Tensor> c = small_constant(*v);
      if (c) {
        onnx::TensorProto t = tensor_to_proto(*c);
        t.set_name(name);
        *g->add_initializer() = std::move(t);
        continue;
      }
    }
    outer.push_back(name);
  }
  sg.outer_names = outer;
  for (const std::string& name : sg.outer_names) {
    auto* in = g->add_input();
    in->set_name(name);
    const Value* v = options.type_outer_reads ? node.graph()->find_value(name) : nullptr;
    if (v != nullptr && v->dtype() != DType::kUndefined) set_type(*v, *in);
  }
  auto model = model_from_proto(std::move(proto));
  if (!model.is_ok())
    return model.status().with_context(node.describe() + ": subgraph '" + graph.name() + "': ");
  sg.model = std::move(model).value();
  return sg;
}

Result<Subgraph> load_subgraph(const Node& node, const std::string& attr,
                               const SubgraphOptions& options) {
  const onnx::AttributeProto* a = node.attr(attr);
  if (a == nullptr || !a->has_g())
    return invalid_model(node.describe() + ": graph attribute '" + attr + "' is missing");
  return load_subgraph(node, a->g(), options);
}

onnx::GraphProto subgraph_to_proto(const Subgraph& sg) {
  onnx::ModelProto proto = model_to_proto(sg.model);
  onnx::GraphProto g = std::move(*proto.mutable_graph());
  while (static_cast<size_t>(g.input_size()) > sg.num_formal_inputs)
    g.mutable_input()->RemoveLast();
  return g;
}

std::vector<std::string> subgraph_attrs(const Node& node) {
  std::vector<std::string> out;
  for (const auto& a : node.attributes())
    if (a.has_g()) out.push_back(a.name());
  return out;
}

void refresh_implicit_inputs(Node& node) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& a : node.attributes()) {
    if (a.has_g()) collect_outer_reads(a.g(), {}, names, seen);
    for (const auto& g : a.graphs()) collect_outer_reads(g, {}, names, seen);
  }
  std::vector<Value*> values;
  for (const std::string& name : names) values.push_back(node.graph()->get_or_create_value(name));
  node.set_implicit_inputs(values);
}

void collect_outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string> defined,
                         std::vector<std::string>& out, std::set<std::string>& seen) {
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& i : g.initializer()) defined.insert(i.name());
  for (const auto& i : g.sparse_initializer()) defined.insert(i.values().name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) defined.insert(o);
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) use(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_outer_reads(a.g(), defined, out, seen);
      for (const auto& sg : a.graphs()) collect_outer_reads(sg, defined, out, seen);
    }
  }
  for (const auto& o : g.output()) use(o.name());
}

}  // namespace xopt::ir
