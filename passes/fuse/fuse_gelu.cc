// 0.5 * x * (1 + Erf(x / sqrt(2))) ==> com.microsoft.Gelu(x) (ONNX Gelu from opset 20);
// 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) ==> com.microsoft.FastGelu(x) (ONNX
// Gelu<approximate="tanh"> from opset 20); then Gelu(a + bias) ==> com.microsoft.BiasGelu(a, bias)
// and FastGelu(a + bias) ==> com.microsoft.FastGelu(a, bias) for a constant 1-D bias on the last
// axis.
//
// Exporters write the arithmetic in many orders (0.5 multiplied first or last, x/sqrt(2) or
// x*(1/sqrt(2)), x^3 as Pow or as products, sqrt(2/pi)*x*(1 + 0.044715*x*x), ...). Rather than list
// them, the pass reads the Add/Sub/Mul/Div/Neg/Pow nodes around an Erf or Tanh as a polynomial in x
// and in the Erf/Tanh result and compares coefficients, so every arrangement of the same formula
// matches and nothing else does.
#include <cmath>
#include <map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using xfmr::scalar_constant;
using xfmr::single_reader;

// A polynomial in x and t (the Erf or Tanh result): (degree of x, degree of t) -> coefficient.
using Poly = std::map<std::pair<int, int>, double>;
constexpr int kMaxDegree = 4;
constexpr size_t kMaxNodes = 16;

Poly add(const Poly& a, const Poly& b, double sign = 1.0) {
  Poly r = a;
  for (const auto& [m, c] : b) r[m] += sign * c;
  return r;
}

std::optional<Poly> mul(const Poly& a, const Poly& b) {
  Poly r;
  for (const auto& [ma, ca] : a)
    for (const auto& [mb, cb] : b) {
      std::pair<int, int> m{ma.first + mb.first, ma.second + mb.second};
      if (m.first > kMaxDegree || m.second > kMaxDegree) return std::nullopt;
      r[m] += ca * cb;
    }
  return r;
}

std::optional<double> constant_term(const Poly& p) {
  for (const auto& [m, c] : p)
    if ((m.first != 0 || m.second != 0) && c != 0) return std::nullopt;
  auto it = p.find({0, 0});
  return it == p.end() ? 0.0 : it->second;
}

// Reads `v` as a polynomial in `x` and `t`, through elementwise arithmetic whose other operands are
// scalar constants or further polynomials. The nodes read are appended to `nodes`.
class PolyReader {
 public:
  PolyReader(const ir::Value* x, const ir::Value* t) : x_(x), t_(t) {}
  std::vector<ir::Node*> nodes;

  std::optional<Poly> read(const ir::Value* v) {
    if (v == nullptr) return std::nullopt;
    if (v == x_) return Poly{{{1, 0}, 1.0}};
    if (t_ != nullptr && v == t_) return Poly{{{0, 1}, 1.0}};
    if (auto c = scalar_constant(v)) return Poly{{{0, 0}, *c}};
    ir::Node* p = v->producer();
    if (p == nullptr || !p->domain().empty() || nodes.size() >= kMaxNodes) return std::nullopt;
    const std::string& op = p->op_type();
    if (op != "Add" && op != "Sub" && op != "Mul" && op != "Div" && op != "Neg" && op != "Pow")
      return std::nullopt;
    nodes.push_back(p);
    auto a = read(p->input(0));
    if (!a) return std::nullopt;
    if (op == "Neg") return add(Poly{}, *a, -1.0);
    if (op == "Pow") {
      auto e = scalar_constant(p->input(1));
      if (!e || *e != std::floor(*e) || *e < 1 || *e > kMaxDegree) return std::nullopt;
      Poly r = *a;
      for (int i = 1; i < static_cast<int>(*e); ++i) {
        auto next = mul(r, *a);
        if (!next) return std::nullopt;
        r = *next;
      }
      return r;
    }
    auto b = read(p->input(1));
    if (!b) return std::nullopt;
    if (op == "Add") return add(*a, *b);
    if (op == "Sub") return add(*a, *b, -1.0);
    if (op == "Mul") return mul(*a, *b);
    auto d = constant_term(*b);  // Div: only by a constant
    if (!d || *d == 0) return std::nullopt;
    return add(Poly{}, *a, 1.0 / *d);
  }

 private:
  const ir::Value* x_;
  const ir::Value* t_;
};

// True when `p` has exactly the `expected` non-negligible coefficients.
bool poly_is(const Poly& p, const Poly& expected) {
  double scale = 0;
  for (const auto& [m, c] : expected) scale = std::max(scale, std::fabs(c));
  for (const auto& [m, c] : p) {
    auto it = expected.find(m);
    if (it == expected.end()) {
      if (std::fabs(c) > 1e-7 * scale) return false;
    } else if (!xfmr::near(c, it->second, 1e-5)) {
      return false;
    }
  }
  for (const auto& [m, c] : expected)
    if (p.find(m) == p.end()) return false;
  return true;
}

struct GeluMatch {
  ir::Value* x = nullptr;
  ir::Value* out = nullptr;
  std::vector<ir::Node*> nodes;
};

// Values the Erf/Tanh input is computed from, nearest first: the candidates for x.
std::vector<ir::Value*> leaf_candidates(ir::Value* v) {
  std::vector<ir::Value*> out, stack{v};
  std::unordered_set<const ir::Value*> seen;
  while (!stack.empty() && out.size() < kMaxNodes) {
    ir::Value* c = stack.back();
    stack.pop_back();
    if (c == nullptr || !seen.insert(c).second || constant_value(c)) continue;
    out.push_back(c);
    ir::Node* p = c->producer();
    if (p == nullptr || !p->domain().empty()) continue;
    const std::string& op = p->op_type();
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Neg" || op == "Pow")
      for (ir::Value* in : p->inputs()) stack.push_back(in);
  }
  return out;
}

// The Erf or Tanh node `f` at the heart of a GELU: finds x from f's input and the value where
// 0.5 * x * (1 + f(...)) is complete.
std::optional<GeluMatch> match_gelu(ir::Node* f, const Poly& inner) {
  ir::Value* in = f->input(0);
  ir::Value* t = f->output(0);
  if (in == nullptr || t == nullptr || !ir::is_float(t->dtype())) return std::nullopt;
  for (ir::Value* x : leaf_candidates(in)) {
    PolyReader inner_reader(x, nullptr);
    auto pin = inner_reader.read(in);
    if (!pin || !poly_is(*pin, inner)) continue;
    // Walk forward from f's result until 0.5*x + 0.5*x*t appears.
    const Poly outer{{{1, 0}, 0.5}, {{1, 1}, 0.5}};
    ir::Value* cur = t;
    for (int step = 0; step < 5; ++step) {
      ir::Node* r = single_reader(cur);
      if (r == nullptr || r->num_outputs() != 1) break;
      cur = r->output(0);
      PolyReader outer_reader(x, t);
      auto pout = outer_reader.read(cur);
      if (!pout || !poly_is(*pout, outer)) continue;
      GeluMatch m;
      m.x = x;
      m.out = cur;
      m.nodes = inner_reader.nodes;
      m.nodes.push_back(f);
      m.nodes.insert(m.nodes.end(), outer_reader.nodes.begin(), outer_reader.nodes.end());
      // Everything computed inside the pattern is read only inside it.
      for (ir::Node* n : m.nodes)
        if (n->output(0) != m.out && !xfmr::only_read_by(n->output(0), m.nodes))
          return std::nullopt;
      if (!(m.out->shape() == x->shape()) || m.out->dtype() != x->dtype()) return std::nullopt;
      return m;
    }
  }
  return std::nullopt;
}

bool is_gelu(const ir::Node* n, bool* tanh) {
  if (n->domain() == "com.microsoft" && n->op_type() == "Gelu") {
    *tanh = false;
    return true;
  }
  if (n->domain() == "com.microsoft" && n->op_type() == "FastGelu" && n->num_inputs() == 1) {
    *tanh = true;
    return true;
  }
  if (n->is("Gelu")) {
    std::string approx = n->attr_string("approximate", "none");
    *tanh = approx == "tanh";
    return approx == "none" || approx == "tanh";
  }
  return false;
}

class FuseGelu final : public Pass {
 public:
  static constexpr std::string_view kName = "fuse-gelu";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    bool shapes_ready = false;
    auto shapes = [&]() -> Status {
      if (!shapes_ready) XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
      shapes_ready = true;
      return Status::ok();
    };
    const bool onnx_gelu = g.opset("") >= 20;
    const double k = std::sqrt(2.0 / M_PI);
    const Poly erf_inner{{{1, 0}, M_SQRT1_2}};
    const Poly tanh_inner{{{1, 0}, k}, {{3, 0}, k * 0.044715}};
    std::unordered_set<const ir::Node*> removed;
    for (ir::Node* n : g.node_list()) {
      if (removed.count(n) || !(n->is("Erf") || n->is("Tanh"))) continue;
      XOPT_RETURN_IF_ERROR(shapes());
      const bool tanh = n->is("Tanh");
      auto m = match_gelu(n, tanh ? tanh_inner : erf_inner);
      if (!m) continue;
      ir::Node* anchor = m->out->producer();
      if (onnx_gelu) {
        ir::Node* fused = xfmr::add_replacing_node(g, m->out, "Gelu", "", {m->x}, anchor, m->nodes);
        if (tanh) fused->set_attr("approximate", std::string("tanh"));
      } else {
        g.require_opset("com.microsoft", 1);
        xfmr::add_replacing_node(g, m->out, tanh ? "FastGelu" : "Gelu", "com.microsoft", {m->x},
                                 anchor, m->nodes);
      }
      xfmr::remove_dead(g, m->nodes, &removed);
      ctx.count(tanh ? "FastGelu" : "Gelu");
      changed = true;
    }
    // Bias Add + Gelu, over a fresh snapshot (new nodes may sit at addresses in `removed`).
    removed.clear();
    for (ir::Node* n : g.node_list()) {
      bool tanh = false;
      if (removed.count(n) || !is_gelu(n, &tanh)) continue;
      ir::Value* sum = n->input(0);
      ir::Node* add = sum != nullptr ? sum->producer() : nullptr;
      if (add == nullptr || !add->is("Add") || single_reader(sum) != n) continue;
      XOPT_RETURN_IF_ERROR(shapes());
      ir::Value* a = nullptr;
      ir::Value* bias = nullptr;
      for (int i = 0; i < 2 && bias == nullptr; ++i) {
        ir::Value* b = add->input(static_cast<size_t>(i));
        ir::Value* other = add->input(static_cast<size_t>(1 - i));
        if (is_last_axis_bias(b, other, sum)) {
          bias = b;
          a = other;
        }
      }
      if (bias == nullptr || a->dtype() != ir::DType::kFloat) continue;
      g.require_opset("com.microsoft", 1);
      xfmr::add_replacing_node(g, n->output(0), tanh ? "FastGelu" : "BiasGelu", "com.microsoft",
                               {a, bias}, n, {add, n});
      xfmr::remove_dead(g, {n, add}, &removed);
      ctx.count(tanh ? "FastGelu-bias" : "BiasGelu");
      changed = true;
    }
    return changed;
  }

 private:
  // A constant 1-D bias whose length is a's last dim, so a + bias has a's shape.
  static bool is_last_axis_bias(const ir::Value* bias, const ir::Value* a, const ir::Value* sum) {
    if (bias == nullptr || a == nullptr || bias == a || !constant_value(bias)) return false;
    const ir::Shape& bs = bias->shape();
    const ir::Shape& as = a->shape();
    if (!bs.has_rank() || bs.rank() != 1 || !bs[0].is_known() || !as.has_rank() || as.rank() < 1)
      return false;
    const ir::Dim& last = as.dims().back();
    return last.is_known() && last.value == bs[0].value && sum->shape() == as &&
           bias->dtype() == a->dtype();
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseGelu,
                   "fuses the erf and tanh GELU formulas into Gelu/FastGelu, and a bias Add "
                   "before them into BiasGelu/FastGelu",
                   {{"fuse", 12}});

}  // namespace xopt::passes
