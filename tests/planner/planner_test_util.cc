#include "planner_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "ir/op_registry.h"
#include "ir/text.h"
#include "planner/lifetimes.h"
#include "planner/planner.h"

namespace xopt::planner::test {

GraphBuilder::GraphBuilder(int64_t opset) {
  model_.graph->require_opset("", opset);
}

ir::Value* GraphBuilder::input(const std::string& name, const std::vector<int64_t>& dims,
                               ir::DType dtype) {
  ir::Value* v = graph().get_or_create_value(name);
  v->set_dtype(dtype);
  v->set_shape(ir::Shape::of(dims));
  graph().add_input(v);
  return v;
}

ir::Value* GraphBuilder::weight(const std::string& name, const std::vector<int64_t>& dims) {
  std::vector<float> zeros(static_cast<size_t>(ir::numel(dims)), 0.0f);
  return graph().add_initializer(name, ir::Tensor::of<float>(dims, zeros));
}

ir::Value* GraphBuilder::op(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                            const std::string& out, const std::vector<int64_t>& dims,
                            const std::string& domain, ir::DType dtype) {
  if (!domain.empty()) graph().require_opset(domain, 1);
  last_ = graph().add_node(op_type, inputs, {out}, domain);
  last_->set_name(out + "_node");
  ir::Value* v = last_->output(0);
  v->set_dtype(dtype != ir::DType::kUndefined           ? dtype
               : inputs.empty() || inputs[0] == nullptr ? ir::DType::kFloat
                                                        : inputs[0]->dtype());
  v->set_shape(ir::Shape::of(dims));
  return v;
}

void GraphBuilder::output(ir::Value* v) {
  outputs_.push_back(v);
  graph().set_outputs(outputs_);
}

ir::Model parse_with_shapes(const std::string& text,
                            const std::map<std::string, std::vector<int64_t>>& shapes) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  ir::Model model = std::move(m).value();
  for (const auto& [name, dims] : shapes) {
    ir::Value* v = model.graph->find_value(name);
    EXPECT_NE(v, nullptr) << name;
    if (v == nullptr) continue;
    if (v->dtype() == ir::DType::kUndefined) v->set_dtype(ir::DType::kFloat);
    v->set_shape(ir::Shape::of(dims));
  }
  return model;
}

void build_random_dag(GraphBuilder& b, std::mt19937& rng, int nodes) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::vector<ir::Value*> pool;
  const int inputs = 1 + pick(2);
  for (int i = 0; i < inputs; ++i)
    pool.push_back(b.input("in" + std::to_string(i), {1 + pick(6), 64}));
  ir::Value* shape = b.graph().add_initializer("shape", ir::Tensor::of<int64_t>({1}, {-1}));
  auto any = [&] { return pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))]; };
  // Mostly recent values, so chains form and values die.
  auto recent = [&] {
    const int n = static_cast<int>(pool.size());
    return pool[static_cast<size_t>(std::max(0, n - 1 - pick(std::min(n, 4))))];
  };
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "t" + std::to_string(i);
    const int kind = pick(10);
    ir::Value* x = pick(3) == 0 ? any() : recent();
    const auto dims = x->shape().static_dims();
    ir::Value* out = nullptr;
    if (kind <= 2) {
      out = b.op(pick(2) ? "Relu" : "Sigmoid", {x}, name, dims);
    } else if (kind <= 4) {
      // Binary: a same-shape partner when one exists, else a broadcast row.
      ir::Value* y = any();
      auto out_dims = dims;
      const auto yd = y->shape().static_dims();
      if (yd != dims) {
        if (yd[0] == 1 || dims[0] == 1)
          out_dims[0] = std::max(yd[0], dims[0]);  // broadcast between activations
        else
          y = pick(2) ? x : b.weight(name + "_w", {1, dims[1]});
      }
      out = pick(2) ? b.op("Add", {x, y}, name, out_dims) : b.op("Mul", {y, x}, name, out_dims);
    } else if (kind <= 6) {
      out = pick(2) ? b.op("Reshape", {x, shape}, name, {ir::numel(dims)})
                    : b.op("Identity", {x}, name, dims);
      if (out->shape().rank() == 1)  // keep 2-D shapes in the pool
        out = b.op("Reshape", {out, shape}, name + "_r", dims);
    } else {
      // Opaque: several inputs, one or two outputs of new sizes, an unused output now and then.
      std::vector<ir::Value*> ins = {x};
      for (int k = pick(3); k > 0; --k) ins.push_back(any());
      ir::Node* n =
          b.graph().add_node("Mix", ins, {name, pick(3) == 0 ? name + "_b" : ""}, "xopt.test");
      b.graph().require_opset("xopt.test", 1);
      n->set_name(name + "_node");
      for (ir::Value* o : n->outputs()) {
        if (o == nullptr) continue;
        o->set_dtype(ir::DType::kFloat);
        o->set_shape(ir::Shape::of({1 + pick(8), 16 * (1 + pick(8))}));
      }
      out = n->output(0);
      if (n->output(1) != nullptr && pick(2)) pool.push_back(n->output(1));
      // Keep the pool 64 wide so binary ops find partners.
      if (out->shape()[1].value != 64)
        out = b.op("Mix", {out}, name + "_m", {1 + pick(6), 64}, "xopt.test");
    }
    pool.push_back(out);
  }
  b.output(pool.back());
  if (pick(2)) b.output(pool[static_cast<size_t>(pick(static_cast<int>(pool.size()) - 1))]);
}

std::vector<const ir::Node*> random_topological_order(const ir::Graph& g, std::mt19937& rng) {
  std::unordered_map<const ir::Node*, int> pending;
  std::vector<const ir::Node*> ready, order;
  for (const ir::Node* n : g.nodes()) {
    std::vector<const ir::Node*> deps;
    for (const ir::Value* v : n->inputs())
      if (v != nullptr && v->producer() != nullptr) deps.push_back(v->producer());
    std::sort(deps.begin(), deps.end());
    pending[n] = static_cast<int>(std::unique(deps.begin(), deps.end()) - deps.begin());
    if (pending[n] == 0) ready.push_back(n);
  }
  while (!ready.empty()) {
    const size_t k = rng() % ready.size();
    const ir::Node* n = ready[k];
    ready.erase(ready.begin() + static_cast<long>(k));
    order.push_back(n);
    std::vector<const ir::Node*> users;
    for (const ir::Value* v : n->outputs())
      if (v != nullptr)
        for (const ir::Use& u : v->uses()) users.push_back(u.node);
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    for (const ir::Node* u : users)
      if (--pending[u] == 0) ready.push_back(u);
  }
  return order;
}

namespace {

// Op facts from the registry: which outputs may legally share bytes with an input.
bool is_elementwise_op(const ir::Node& n) {
  const ir::OpInfo* op = ir::find_op(n);
  if (op != nullptr && op->elementwise) return true;
  // BatchNormalization at inference (one output) maps X element for element.
  return n.is("BatchNormalization") && n.num_outputs() == 1;
}

// com.microsoft FusedConv accumulates its convolution onto Z (input 3) in place.
bool is_residual_input(const ir::Node& n, const ir::Value* x) {
  return n.domain() == "com.microsoft" && n.op_type() == "FusedConv" && n.num_inputs() > 3 &&
         x == n.input(3) && x != n.input(0);
}

bool is_view_op(const ir::Node& n) {
  return ir::is_view_node(n);
}

}  // namespace

std::string replay(const ir::Graph& g, const std::vector<const ir::Node*>& order,
                   const MemoryPlan& plan) {
  const size_t unit = plan.alignment;
  std::vector<int> cell(plan.arena_bytes / unit + 1, -1);  // content id per chunk
  std::unordered_map<std::string, const PlannedValue*> planned;
  for (const auto& v : plan.values) planned[v.name] = &v;
  std::unordered_map<const ir::Value*, int> content;
  int next_content = 0;
  auto chunks = [&](const PlannedValue& p) {
    return std::make_pair(p.offset / unit, (p.offset + p.bytes + unit - 1) / unit);
  };
  auto write = [&](const ir::Value* v) {
    auto it = planned.find(v->name());
    if (it == planned.end()) return;
    const auto [lo, hi] = chunks(*it->second);
    for (size_t c = lo; c < hi; ++c) cell[c] = content.at(v);
  };
  auto check = [&](const ir::Value* v, const std::string& when) -> std::string {
    auto it = planned.find(v->name());
    if (it == planned.end()) return "";
    const auto [lo, hi] = chunks(*it->second);
    for (size_t c = lo; c < hi; ++c)
      if (cell[c] != content.at(v))
        return "value '" + v->name() + "' was overwritten before " + when + " (chunk " +
               std::to_string(c) + ")";
    return "";
  };
  for (const ir::Value* v : g.runtime_inputs()) {
    content[v] = next_content++;
    write(v);
  }
  for (const ir::Value* v : g.initializers()) content[v] = next_content++;
  for (size_t s = 0; s < order.size(); ++s) {
    const ir::Node& n = *order[s];
    for (const ir::Value* x : n.inputs())
      if (x != nullptr) {
        std::string err = check(x, n.name() + " reads it");
        if (!err.empty()) return err;
      }
    for (size_t k = 0; k < n.num_outputs(); ++k) {
      const ir::Value* y = n.output(k);
      if (y == nullptr) continue;
      content[y] = (k == 0 && is_view_op(n)) ? content.at(n.input(0)) : next_content++;
      // An output overlapping one of its node's inputs is legal only as a view or as an
      // elementwise op writing over an input of exactly its size.
      auto py = planned.find(y->name());
      if (py != planned.end() && py->second->bytes > 0) {
        for (const ir::Value* x : n.inputs()) {
          auto px = x != nullptr ? planned.find(x->name()) : planned.end();
          if (px == planned.end() || px->second->bytes == 0) continue;
          const PlannedValue& a = *px->second;
          const PlannedValue& b = *py->second;
          const bool overlap = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
          if (!overlap) continue;
          const bool ok = (k == 0 && is_view_op(n) && x == n.input(0)) ||
                          (k == 0 && (is_elementwise_op(n) || is_residual_input(n, x)) &&
                           a.offset == b.offset && a.bytes == b.bytes);
          if (!ok)
            return "output '" + y->name() + "' of " + n.name() + " overlaps its input '" +
                   x->name() + "'";
        }
      }
      write(y);
    }
  }
  for (const ir::Value* v : g.outputs()) {
    std::string err = check(v, "the end");
    if (!err.empty()) return err;
  }
  return "";
}

std::vector<Buffer> random_buffers(std::mt19937& rng, int count, int steps, int max_units,
                                   size_t unit) {
  std::vector<Buffer> out;
  for (int i = 0; i < count; ++i) {
    Buffer b;
    b.first = static_cast<int>(rng() % static_cast<unsigned>(steps)) - 1;
    b.last = b.first + static_cast<int>(rng() % static_cast<unsigned>(std::max(1, steps / 2)));
    b.size = unit * (1 + rng() % static_cast<unsigned>(max_units));
    out.push_back(b);
  }
  return out;
}

size_t brute_force_arena(const std::vector<Buffer>& buffers, size_t unit) {
  size_t best = 0;
  for (const Buffer& b : buffers) best += b.size;  // naive is always feasible
  std::vector<size_t> off(buffers.size());
  std::function<void(size_t, size_t)> go = [&](size_t i, size_t arena) {
    if (arena >= best) return;
    if (i == buffers.size()) {
      best = arena;
      return;
    }
    for (size_t o = 0; o + buffers[i].size < best; o += unit) {
      bool ok = true;
      for (size_t k = 0; k < i && ok; ++k)
        ok = !live_together(buffers[i], buffers[k]) || o + buffers[i].size <= off[k] ||
             off[k] + buffers[k].size <= o;
      if (!ok) continue;
      off[i] = o;
      go(i + 1, std::max(arena, o + buffers[i].size));
    }
  };
  go(0, 0);
  return best;
}

std::unique_ptr<Chain> chain(const std::vector<int64_t>& widths) {
  auto c = std::make_unique<Chain>();
  ir::Value* x = c->b.input("x", {1, 256});
  int64_t k = 256;
  for (size_t i = 0; i < widths.size(); ++i) {
    ir::Value* w = c->b.weight("w" + std::to_string(i), {k, widths[i]});
    x = c->b.op("MatMul", {x, w}, "y" + std::to_string(i), {1, widths[i]});
    k = widths[i];
  }
  c->b.output(x);
  c->order = graph_order(c->b.graph());
  c->plan = plan(c->b.graph(), c->order).value();
  return c;
}

}  // namespace xopt::planner::test
