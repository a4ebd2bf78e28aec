#include "passes/fuse/xfmr_match.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "passes/rewrite.h"

namespace xopt::passes::xfmr {

std::optional<double> scalar_constant(const ir::Value* v) {
  auto t = constant_value(v);
  if (!t || t->numel() != 1 || t->dtype() == ir::DType::kString) return std::nullopt;
  return t->as_double(0);
}

bool near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::fabs(b);
}

ir::Node* single_reader(const ir::Value* v) {
  if (v == nullptr || v->uses().size() != 1 || name_is_visible(v)) return nullptr;
  return v->uses().front().node;
}

bool only_read_by(const ir::Value* v, const std::vector<ir::Node*>& nodes) {
  if (v == nullptr || name_is_visible(v)) return false;
  for (const ir::Use& u : v->uses())
    if (std::find(nodes.begin(), nodes.end(), u.node) == nodes.end()) return false;
  return true;
}

ir::Value* other_input(const ir::Node* n, const ir::Value* v) {
  if (n->num_inputs() != 2) return nullptr;
  if (n->input(0) == v && n->input(1) != v) return n->input(1);
  if (n->input(1) == v && n->input(0) != v) return n->input(0);
  return nullptr;
}

std::optional<std::vector<int64_t>> static_dims(const ir::Value* v) {
  if (v == nullptr || !v->shape().is_static()) return std::nullopt;
  return v->shape().static_dims();
}

ir::Node* add_replacing_node(ir::Graph& g, ir::Value* old, const std::string& op,
                             const std::string& domain, const std::vector<ir::Value*>& inputs,
                             ir::Node* before, const std::vector<ir::Node*>& replaced,
                             const std::vector<std::string>& extra_outputs) {
  ir::DType dtype = old->dtype();
  ir::Shape shape = old->shape();
  std::string name = release_name(g, old);
  std::vector<std::string> outs{name};
  outs.insert(outs.end(), extra_outputs.begin(), extra_outputs.end());
  ir::Node* n = g.add_node(op, inputs, outs, domain, before);
  // The fused node is named after the node whose result it takes over, so errors and diagrams
  // point at the user's own node.
  if (old->producer() != nullptr) n->set_name(old->producer()->name());
  for (const ir::Node* r : replaced) n->add_provenance(*r);
  n->output(0)->set_dtype(dtype);
  n->output(0)->set_shape(shape);
  g.replace_all_uses(old, n->output(0));
  return n;
}

ir::Node* add_node(ir::Graph& g, const std::string& op, const std::vector<ir::Value*>& inputs,
                   const std::string& hint, ir::DType dtype, const std::vector<int64_t>& dims,
                   ir::Node* before, const std::string& domain) {
  ir::Node* n = g.add_node(op, inputs, {hint}, domain, before);
  // Named as its result (the hint carries the layer's scope, e.g. /enc/layers.0/self_attn/mha_q):
  // an unnamed node has no place in the diagrams' layer clusters and nothing to name in errors.
  n->set_name(n->output(0)->name());
  n->output(0)->set_dtype(dtype);
  n->output(0)->set_shape(ir::Shape::of(dims));
  return n;
}

ir::Value* ConstantPool::get(ir::Graph& g, const std::string& hint, ir::Tensor t) {
  std::string_view bytes(static_cast<const char*>(t.raw_data()), t.nbytes());
  size_t h = std::hash<std::string_view>{}(bytes) ^ (static_cast<size_t>(t.dtype()) << 1);
  for (int64_t d : t.dims()) h = h * 31 + static_cast<size_t>(d);
  auto [lo, hi] = by_hash_.equal_range(h);
  for (auto it = lo; it != hi; ++it)
    if (it->second->initializer() != nullptr && it->second->initializer()->same_contents(t))
      return it->second;
  ir::Value* v = g.add_initializer(hint, std::move(t));
  by_hash_.emplace(h, v);
  return v;
}

namespace {
bool is_dead(const ir::Node* n) {
  for (const ir::Value* v : n->outputs())
    if (v != nullptr && (v->has_uses() || v->is_graph_output())) return false;
  return true;
}
}  // namespace

int remove_dead(ir::Graph& g, const std::vector<ir::Node*>& nodes,
                std::unordered_set<const ir::Node*>* removed_set) {
  std::vector<ir::Node*> left = nodes;
  std::sort(left.begin(), left.end());
  left.erase(std::unique(left.begin(), left.end()), left.end());
  left.erase(std::remove(left.begin(), left.end(), nullptr), left.end());
  if (removed_set != nullptr)  // gone already: never dereference them
    left.erase(std::remove_if(left.begin(), left.end(),
                              [&](const ir::Node* n) { return removed_set->count(n) != 0; }),
               left.end());
  // Inputs by name: a value whose producer goes is destroyed with it.
  std::vector<std::string> inputs;
  int removed = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (ir::Node*& n : left) {
      if (n == nullptr || !is_dead(n)) continue;
      for (const ir::Value* in : n->inputs())
        if (in != nullptr) inputs.push_back(in->name());
      g.remove_node(n);
      if (removed_set != nullptr) removed_set->insert(n);
      n = nullptr;
      ++removed;
      progress = true;
    }
  }
  // Weights and Constant nodes only the removed nodes read go too.
  for (const std::string& name : inputs) {
    ir::Value* v = g.find_value(name);
    if (v == nullptr || v->has_uses() || v->is_graph_output() || v->is_graph_input()) continue;
    if (v->is_initializer()) {
      g.remove_initializer(v);
    } else if (ir::Node* p = v->producer(); p != nullptr && p->is("Constant") && is_dead(p)) {
      g.remove_node(p);
      if (removed_set != nullptr) removed_set->insert(p);
    }
  }
  return removed;
}

ir::Tensor slice_columns(const ir::Tensor& t, int64_t begin, int64_t count) {
  const int64_t rows = t.dims()[0], cols = t.dims()[1];
  const size_t es = ir::dtype_size(t.dtype());
  ir::Tensor out(t.dtype(), {rows, count});
  const auto* src = static_cast<const std::byte*>(t.raw_data());
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + static_cast<size_t>(r * count) * es,
                src + static_cast<size_t>(r * cols + begin) * es, static_cast<size_t>(count) * es);
  return out;
}

ir::Tensor slice_flat(const ir::Tensor& t, int64_t begin, int64_t count) {
  const size_t es = ir::dtype_size(t.dtype());
  ir::Tensor out(t.dtype(), {count});
  std::memcpy(out.mutable_raw_data(),
              static_cast<const std::byte*>(t.raw_data()) + static_cast<size_t>(begin) * es,
              static_cast<size_t>(count) * es);
  return out;
}

ir::Tensor transpose_2d(const ir::Tensor& t) {
  const int64_t rows = t.dims()[0], cols = t.dims()[1];
  const size_t es = ir::dtype_size(t.dtype());
  ir::Tensor out(t.dtype(), {cols, rows});
  const auto* src = static_cast<const std::byte*>(t.raw_data());
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + static_cast<size_t>(c * rows + r) * es,
                  src + static_cast<size_t>(r * cols + c) * es, es);
  return out;
}

ir::Tensor concat_flat(const std::vector<ir::Tensor>& parts) {
  int64_t total = 0;
  for (const auto& p : parts) total += p.numel();
  ir::Tensor out(parts.front().dtype(), {total});
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  for (const auto& p : parts) {
    std::memcpy(dst, p.raw_data(), p.nbytes());
    dst += p.nbytes();
  }
  return out;
}

}  // namespace xopt::passes::xfmr
