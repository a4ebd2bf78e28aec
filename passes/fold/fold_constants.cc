// Node(c1, c2, ...) whose inputs are all constants ==> its results as initializers, computed with
// the CPU reference kernels; Constant nodes become initializers. A result much larger than the
// node's inputs (Tile, Expand, ConstantOfShape, Range, ...) stays computed, unless only further
// folding reads it and shrinks it again, so the model does not grow by materialised broadcasts.
// DequantizeLinear is never folded: quantized weights stay quantized.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "executor/cpu/allocator.h"
#include "executor/cpu/kernel.h"
#include "ir/op_registry.h"
#include "passes/fold/node_traits.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using Env = std::unordered_map<const ir::Value*, ir::Tensor>;

// Intermediate results that only feed further folding may exceed fold_max_bytes, up to this much.
constexpr size_t kEvaluationCap = size_t{256} << 20;

const ir::Tensor* lookup(const Env& env, const ir::Value* v) {
  auto it = env.find(v);
  return it == env.end() ? nullptr : &it->second;
}

// Elements of a 1-D integer tensor, or nullopt.
std::optional<std::vector<int64_t>> ints_of(const ir::Tensor* t) {
  if (t == nullptr || !ir::is_integer(t->dtype()) || t->rank() > 1) return std::nullopt;
  return t->to_int64_vector();
}

// An upper estimate of the elements a node is about to produce, for the ops whose result size is
// unrelated to their inputs' sizes, and for any node whose output shape is statically known. Lets
// the pass refuse to compute a gigantic broadcast at all.
std::optional<double> estimated_bytes(const ir::Node& n, const Env& env) {
  auto product = [](const std::vector<int64_t>& v) {
    double p = 1;
    for (int64_t d : v) p *= static_cast<double>(std::max<int64_t>(d, 0));
    return p;
  };
  const ir::Value* out = n.output(0);
  double elem =
      out != nullptr && out->dtype() != ir::DType::kUndefined && out->dtype() != ir::DType::kString
          ? static_cast<double>(ir::dtype_size(out->dtype()))
          : 8.0;
  if (out != nullptr && out->shape().has_rank()) {
    auto numel = out->shape().numel();
    if (numel) return static_cast<double>(*numel) * elem;
  }
  const ir::Tensor* in0 = n.num_inputs() > 0 ? lookup(env, n.input(0)) : nullptr;
  const ir::Tensor* in1 = n.num_inputs() > 1 ? lookup(env, n.input(1)) : nullptr;
  if (n.is("ConstantOfShape")) {
    if (auto dims = ints_of(in0)) return product(*dims) * elem;
  } else if (n.is("Tile") && in0 != nullptr) {
    if (auto reps = ints_of(in1)) return static_cast<double>(in0->numel()) * product(*reps) * elem;
  } else if (n.is("Expand") && in0 != nullptr) {
    if (auto dims = ints_of(in1)) {
      // Broadcast of the input's dims with the target dims, right-aligned.
      std::vector<int64_t> a = in0->dims(), b = *dims;
      if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
      if (b.size() < a.size()) b.insert(b.begin(), a.size() - b.size(), 1);
      double p = 1;
      for (size_t i = 0; i < a.size(); ++i)
        p *= static_cast<double>(std::max<int64_t>(std::max(a[i], b[i]), 0));
      return p * elem;
    }
  } else if (n.is("Range") && n.num_inputs() >= 3) {
    const ir::Tensor* delta = lookup(env, n.input(2));
    if (in0 != nullptr && in1 != nullptr && delta != nullptr && in0->numel() == 1 &&
        in1->numel() == 1 && delta->numel() == 1 && delta->as_double() != 0) {
      double count = std::ceil((in1->as_double() - in0->as_double()) / delta->as_double());
      return std::max(0.0, count) * elem;
    }
  }
  return std::nullopt;
}

class FoldConstants final : public Pass {
 public:
  static constexpr std::string_view kName = "fold-constants";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    const size_t limit = ctx.options().fold_max_bytes;
    const size_t cap = std::max(limit, kEvaluationCap);

    // 1. Evaluate, in graph order, every node that can be evaluated from constants.
    Env env;
    std::unordered_map<std::string, std::vector<ir::Tensor>> memos;
    std::vector<ir::Node*> evaluated;
    std::unordered_set<const ir::Node*> is_evaluated;
    for (ir::Node* n : g.node_list()) {
      if (!is_pure(*n)) continue;
      if (n->num_inputs() == 0 && !n->is("Constant")) continue;
      // DequantizeLinear(constant) is a quantized weight: folding it would store the weight in
      // float (4x the bytes) and lose the quantization a runtime can exploit. It stays computed.
      if (n->is("DequantizeLinear")) continue;
      bool all_constant = true;
      for (const ir::Value* v : n->inputs()) {
        if (v == nullptr || lookup(env, v) != nullptr) continue;
        if (v->is_constant()) {
          env.emplace(v, *v->initializer());
          continue;
        }
        all_constant = false;
        break;
      }
      if (!all_constant) continue;
      const exec::KernelDef* kernel =
          exec::KernelRegistry::global().find(n->domain(), n->op_type(), n->opset());
      if (kernel == nullptr) continue;
      auto estimate = estimated_bytes(*n, env);
      if (estimate && *estimate > static_cast<double>(cap)) {
        ctx.count("too-large-to-evaluate");
        continue;
      }
      // A node computing what an earlier one computed from the same bytes (PyTorch exports read a
      // shared weight through one Identity per layer, each then transposed) shares its results.
      const std::string key = evaluation_key(*n, env);
      auto memo = key.empty() ? memos.end() : memos.find(key);
      auto results = memo != memos.end() ? std::optional(memo->second) : evaluate(*n, *kernel, env);
      if (!results) continue;
      bool fits = true;
      for (const ir::Tensor& t : *results) fits = fits && t.nbytes() <= cap;
      if (!fits) {
        ctx.count("too-large-to-evaluate");
        continue;
      }
      if (!key.empty() && memo == memos.end()) memos.emplace(key, *results);
      for (size_t i = 0; i < n->num_outputs(); ++i)
        if (n->output(i) != nullptr) env[n->output(i)] = std::move((*results)[i]);
      evaluated.push_back(n);
      is_evaluated.insert(n);
    }
    if (evaluated.empty()) return false;

    // 2. Walking backwards (readers before producers), decide which evaluated nodes stay: those
    // whose results something outside the folded set reads and that are much larger than their
    // inputs.
    std::unordered_set<const ir::Node*> kept;
    auto needed = [&](const ir::Value* v) {
      if (v->is_graph_output()) return true;
      for (const ir::Use& u : v->uses())
        if (u.index < 0 || !is_evaluated.count(u.node) || kept.count(u.node)) return true;
      return false;
    };
    for (auto it = evaluated.rbegin(); it != evaluated.rend(); ++it) {
      ir::Node* n = *it;
      if (n->is("Constant")) continue;
      size_t out_bytes = 0;
      bool read = false;
      for (const ir::Value* v : n->outputs()) {
        if (v == nullptr || !needed(v)) continue;
        read = true;
        out_bytes += env[v].nbytes();
      }
      if (!read) continue;
      size_t in_bytes = 0;
      for (const ir::Value* v : n->inputs())
        if (v != nullptr) in_bytes += env[v].nbytes();
      if (out_bytes > limit && out_bytes > in_bytes) {
        kept.insert(n);
        ctx.count("left-large");
      }
    }

    // 3. Results read from outside the folded set become initializers (Constant nodes when they
    // are graph outputs, which stay node results); then the folded nodes go, readers first.
    std::vector<ir::Node*> removable;
    for (ir::Node* n : evaluated) {
      if (kept.count(n)) continue;
      if (n->is("Constant") && n->output(0) != nullptr && n->output(0)->is_graph_output())
        continue;  // already in its final form
      for (ir::Value* v : n->outputs())
        if (v != nullptr && needed(v)) materialize(g, n, v, env[v]);
      removable.push_back(n);
    }
    std::vector<ir::Value*> inputs;
    for (auto it = removable.rbegin(); it != removable.rend(); ++it) {
      ir::Node* n = *it;
      for (ir::Value* v : n->inputs())
        if (v != nullptr && v->is_initializer()) inputs.push_back(v);
      ctx.count(n->is("Constant") ? "constant-nodes" : "nodes");
      g.remove_node(n);
    }
    std::unordered_set<ir::Value*> dropped;
    for (ir::Value* v : inputs) {
      if (dropped.count(v) || v->has_uses() || v->is_graph_input() || v->is_graph_output())
        continue;
      dropped.insert(v);
      g.remove_initializer(v);
    }
    return !removable.empty();
  }

 private:
  // Runs the kernel of `n` on constant inputs; nullopt when it fails (the node then stays and
  // whoever runs the model sees the error).
  static std::optional<std::vector<ir::Tensor>> evaluate(const ir::Node& n,
                                                         const exec::KernelDef& kernel,
                                                         const Env& env) {
    std::vector<const ir::Tensor*> ins;
    for (const ir::Value* v : n.inputs()) ins.push_back(v == nullptr ? nullptr : lookup(env, v));
    // Identity of a weight (PyTorch's exporter reads every weight through one) shares its bytes.
    if (n.is("Identity") && n.num_outputs() == 1 && ins.size() == 1 && ins[0] != nullptr)
      return std::vector<ir::Tensor>{*ins[0]};
    std::vector<ir::Tensor> outs(n.num_outputs());
    exec::SimpleAllocator allocator;
    exec::KernelContext kctx(n, ins, &outs, &allocator);
    if (!kernel.fn(kctx).is_ok()) return std::nullopt;
    for (size_t i = 0; i < n.num_outputs(); ++i)
      if (n.output(i) != nullptr && (i >= outs.size() || outs[i].empty())) return std::nullopt;
    // Views (Reshape, Squeeze, Flatten, ...) share their input's bytes too, so folding a chain of
    // them over large weights holds one copy of the weights, not one per step.
    if (!outs.empty() && !ins.empty() && ins[0] != nullptr && ir::is_view_node(n) &&
        outs[0].dtype() == ins[0]->dtype() && outs[0].dtype() != ir::DType::kString &&
        outs[0].numel() == ins[0]->numel())
      outs[0] = ins[0]->reshaped(outs[0].dims());
    return outs;
  }

  // What `n` computes: its op, attributes and the address, type and dims of each input's bytes
  // (equal for Identity results and views of one weight; env keeps every one alive, so no address
  // is reused). Empty for nodes without inputs (a Constant's value would be copied into the key),
  // with subgraphs, or with string inputs.
  static std::string evaluation_key(const ir::Node& n, const Env& env) {
    if (n.num_inputs() == 0) return {};
    std::string key = n.domain() + "." + n.op_type() + ":" + std::to_string(n.opset()) + "|" +
                      std::to_string(n.num_outputs());
    for (const onnx::AttributeProto& a : n.attributes()) {
      if (a.has_g() || a.graphs_size() > 0) return {};
      key += "|" + a.SerializeAsString();
    }
    for (const ir::Value* v : n.inputs()) {
      const ir::Tensor* t = v == nullptr ? nullptr : lookup(env, v);
      if (t == nullptr) {
        key += "|-";
        continue;
      }
      if (t->dtype() == ir::DType::kString || t->raw_data() == nullptr) return {};
      key += "|" + std::to_string(reinterpret_cast<uintptr_t>(t->raw_data())) + ":" +
             std::to_string(static_cast<int>(t->dtype()));
      for (int64_t d : t->dims()) key += "," + std::to_string(d);
    }
    return key;
  }

  // Readers of `v` read an initializer with its value and name instead.
  static void materialize(ir::Graph& g, ir::Node* n, ir::Value* v, const ir::Tensor& t) {
    std::string name = release_name(g, v);
    ir::Value* c;
    if (v->is_graph_output()) {
      ir::Node* k = g.add_node("Constant", {}, {name}, "", n);
      k->set_name(n->name());
      k->add_provenance(*n);
      onnx::AttributeProto a;
      a.set_name("value");
      a.set_type(onnx::AttributeProto::TENSOR);
      *a.mutable_t() = ir::tensor_to_proto(t);
      k->set_attr(a);
      c = k->output(0);
      c->set_dtype(t.dtype());
      c->set_shape(t.shape());
    } else {
      c = g.add_initializer(name, t);
    }
    g.replace_all_uses(v, c);
  }
};

}  // namespace

XOPT_REGISTER_PASS(FoldConstants,
                   "evaluates nodes whose inputs are all constants and stores their results as "
                   "initializers (Constant nodes too); results that would grow the model by more "
                   "than --fold-max-bytes stay computed",
                   {{"fold", 10}});

}  // namespace xopt::passes
