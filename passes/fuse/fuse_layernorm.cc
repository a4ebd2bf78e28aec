// d = x - ReduceMean(x); y = d / Sqrt(ReduceMean(d^2) + eps) [* gamma] [+ beta], over trailing axes
// ==> LayerNormalization(x, gamma, beta, axis, epsilon)   (ONNX opset 17)
//
// Variants: d*d for d^2; Reciprocal(Sqrt(.)) * d or Pow(., -0.5) * d for the division; Pow(., 0.5)
// for Sqrt; the centered value computed by two identical Subs; no gamma and/or no beta.
//
// Before opset 17 ONNX has no LayerNormalization, and onnxruntime's com.microsoft domain has none
// either: its old LayerNormalization is registered in the ONNX domain (version 1), which the ONNX
// checker rejects, and SkipLayerNormalization needs a skip input. So when a pattern matches in an
// older model, the model's default-domain opset is raised to 17 where every node in it keeps its
// meaning (fuse/opset_upgrade.h: unchanged schemas, type-only changes, the opset-13 attribute ->
// input moves rewritten); the result is plain ONNX 17 that the checker, onnxruntime and every
// other opset-17 runtime accept. Where some node would change meaning, the model keeps its opset
// and the decomposed form stays.
#include <algorithm>
#include <numeric>
#include <unordered_set>
#include <vector>

#include "passes/fuse/opset_upgrade.h"
#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using xfmr::other_input;
using xfmr::scalar_constant;
using xfmr::single_reader;

// The axes a ReduceMean reduces, normalized and sorted; nullopt when unknown or keepdims=0.
std::optional<std::vector<int64_t>> reduce_axes(const ir::Node* n, int64_t rank) {
  if (n->attr_int("keepdims", 1) != 1) return std::nullopt;
  std::vector<int64_t> axes;
  if (n->opset() < 18) {
    axes = n->attr_ints("axes");
  } else if (n->input(1) != nullptr) {
    auto t = constant_value(n->input(1));
    if (!t) return std::nullopt;
    axes = t->to_int64_vector();
  }
  if (axes.empty()) {
    if (n->opset() >= 18 && n->attr_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

// A node of `op` reading `v` with `other` (any order, or as the given input), when it is v's
// only reader.
ir::Node* reader_of(const ir::Value* v, const char* op) {
  ir::Node* r = single_reader(v);
  return r != nullptr && r->is(op) ? r : nullptr;
}

struct Match {
  ir::Value* x = nullptr;
  int64_t axis = 0;  // first normalized axis (negative: counted from the back)
  double epsilon = 0;
  ir::Value* gamma = nullptr;
  ir::Value* beta = nullptr;
  ir::Value* out = nullptr;
  std::vector<ir::Node*> nodes;
};

class FuseLayerNorm final : public Pass {
 public:
  static constexpr std::string_view kName = "fuse-layernorm";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    if (g.opset("") < 11) return false;  // no upgrade from there (fuse/opset_upgrade.h)
    bool shapes_ready = false;
    bool changed = false;
    std::unordered_set<const ir::Node*> removed;
    xfmr::ConstantPool pool;
    for (ir::Node* n : g.node_list()) {
      if (removed.count(n) || !n->is("ReduceMean")) continue;
      if (!shapes_ready) {
        XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
        shapes_ready = true;
      }
      auto m = match(n);
      if (!m) continue;
      if (g.opset("") < 17) {
        if (!fuse::opset_upgrade_blocker(model, 17).empty()) return changed;
        fuse::upgrade_default_opset(model, 17);
        ctx.count("opset-upgrade");
      }
      rewrite(g, *m, removed, pool);
      ctx.count("LayerNormalization");
      changed = true;
    }
    return changed;
  }

 private:
  static std::optional<Match> match(ir::Node* mean_node) {
    Match m;
    m.x = mean_node->input(0);
    ir::Value* mean = mean_node->output(0);
    if (m.x == nullptr || mean == nullptr || !m.x->shape().has_rank()) return std::nullopt;
    if (!ir::is_float(m.x->dtype())) return std::nullopt;
    const auto rank = static_cast<int64_t>(m.x->shape().rank());
    auto axes = reduce_axes(mean_node, rank);
    if (!axes || axes->empty()) return std::nullopt;
    // Only trailing axes [rank - k, rank) are a LayerNormalization.
    for (size_t i = 0; i < axes->size(); ++i)
      if ((*axes)[i] != rank - static_cast<int64_t>(axes->size()) + static_cast<int64_t>(i))
        return std::nullopt;
    m.axis = -static_cast<int64_t>(axes->size());
    m.nodes.push_back(mean_node);

    // Every reader of the mean is Sub(x, mean): one or two of them.
    if (name_is_visible(mean) || mean->uses().empty() || mean->uses().size() > 2)
      return std::nullopt;
    std::vector<ir::Node*> subs;
    for (const ir::Use& u : mean->uses()) {
      ir::Node* s = u.node;
      if (!s->is("Sub") || s->input(0) != m.x || s->input(1) != mean) return std::nullopt;
      subs.push_back(s);
    }
    if (subs.size() == 2 && subs[0] == subs[1]) return std::nullopt;

    // Variance branch from one of the Subs: Pow(d, 2) or Mul(d, d), then ReduceMean, + eps.
    ir::Node* square = nullptr;
    ir::Node* var_sub = nullptr;
    for (ir::Node* s : subs) {
      for (const ir::Use& u : s->output(0)->uses()) {
        ir::Node* r = u.node;
        bool is_sq = false;
        if (r->is("Pow") && r->input(0) == s->output(0)) {
          auto e = scalar_constant(r->input(1));
          is_sq = e && *e == 2.0;
        } else if (r->is("Mul") && r->input(0) == s->output(0) && r->input(1) == s->output(0)) {
          is_sq = true;
        }
        if (is_sq) {
          square = r;
          var_sub = s;
        }
      }
    }
    if (square == nullptr) return std::nullopt;
    ir::Node* var_node = reader_of(square->output(0), "ReduceMean");
    if (var_node == nullptr || reduce_axes(var_node, rank) != axes) return std::nullopt;
    ir::Node* add_eps = reader_of(var_node->output(0), "Add");
    if (add_eps == nullptr) return std::nullopt;
    auto eps = scalar_constant(other_input(add_eps, var_node->output(0)));
    if (!eps || *eps < 0) return std::nullopt;
    m.epsilon = *eps;
    m.nodes.insert(m.nodes.end(), {square, var_node, add_eps});

    // The normalization: d / Sqrt(v), d * Reciprocal(Sqrt(v)), d * Pow(v, -0.5), d / Pow(v, 0.5).
    ir::Value* ve = add_eps->output(0);
    ir::Node* root = single_reader(ve);
    if (root == nullptr) return std::nullopt;
    ir::Node* combine = nullptr;  // the Div or Mul producing the normalized value
    bool divide = false;
    ir::Value* denom = nullptr;
    if (root->is("Sqrt") || (root->is("Pow") && root->input(0) == ve &&
                             scalar_constant(root->input(1)) == std::optional<double>(0.5))) {
      m.nodes.push_back(root);
      denom = root->output(0);
      ir::Node* r = single_reader(denom);
      if (r == nullptr) return std::nullopt;
      if (r->is("Div") && r->input(1) == denom) {
        combine = r;
        divide = true;
      } else if (r->is("Reciprocal")) {
        m.nodes.push_back(r);
        denom = r->output(0);
        combine = reader_of(denom, "Mul");
      }
    } else if (root->is("Pow") && root->input(0) == ve &&
               scalar_constant(root->input(1)) == std::optional<double>(-0.5)) {
      m.nodes.push_back(root);
      denom = root->output(0);
      combine = reader_of(denom, "Mul");
    }
    if (combine == nullptr) return std::nullopt;
    ir::Value* centered = divide ? combine->input(0) : other_input(combine, denom);
    if (centered == nullptr) return std::nullopt;
    ir::Node* num_sub = centered->producer();
    if (std::find(subs.begin(), subs.end(), num_sub) == subs.end()) return std::nullopt;
    // With two Subs, one feeds the square and the other the division; with one, it feeds both.
    if (subs.size() == 2 && num_sub == var_sub) return std::nullopt;
    m.nodes.push_back(combine);
    for (ir::Node* s : subs) m.nodes.push_back(s);
    // The Sub results are read only inside the pattern.
    for (ir::Node* s : subs)
      if (!xfmr::only_read_by(s->output(0), m.nodes)) return std::nullopt;
    if (!xfmr::only_read_by(mean, m.nodes)) return std::nullopt;

    // Optional affine part: * gamma, then + beta, each shaped like the normalized dims.
    m.out = combine->output(0);
    const auto& xdims = m.x->shape().dims();
    std::vector<ir::Dim> norm_dims(xdims.end() + m.axis, xdims.end());
    if (ir::Node* mul = reader_of(m.out, "Mul")) {
      ir::Value* gm = other_input(mul, m.out);
      if (gm != nullptr && is_param(gm, norm_dims, m.x->dtype())) {
        m.gamma = gm;
        m.nodes.push_back(mul);
        m.out = mul->output(0);
      }
    }
    if (ir::Node* add = reader_of(m.out, "Add")) {
      ir::Value* bt = other_input(add, m.out);
      if (bt != nullptr && is_param(bt, norm_dims, m.x->dtype())) {
        m.beta = bt;
        m.nodes.push_back(add);
        m.out = add->output(0);
      }
    }
    // The result keeps x's shape (the affine part broadcast nothing new).
    if (!(m.out->shape() == m.x->shape())) return std::nullopt;
    // Without gamma a ones tensor of the normalized dims stands in, so those must be known.
    if (m.gamma == nullptr)
      for (const ir::Dim& d : norm_dims)
        if (!d.is_known()) return std::nullopt;
    return m;
  }

  // A scale or bias LayerNormalization can take: dims equal to the normalized dims once leading
  // ones are dropped (a constant may need reshaping to exactly those dims; anything else must
  // already have them).
  static bool is_param(const ir::Value* p, const std::vector<ir::Dim>& norm, ir::DType t) {
    if (p->dtype() != t || !p->shape().has_rank()) return false;
    const auto& pd = p->shape().dims();
    if (pd.size() == norm.size()) return std::equal(pd.begin(), pd.end(), norm.begin());
    if (!p->is_constant() && constant_value(p) == std::nullopt) return false;
    auto strip = [](std::vector<ir::Dim> d) {
      size_t i = 0;
      while (i < d.size() && d[i].is_known() && d[i].value == 1) ++i;
      d.erase(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(i));
      return d;
    };
    for (const ir::Dim& d : norm)
      if (!d.is_known()) return false;
    return strip(pd) == strip(norm);
  }

  // `p` with exactly the normalized dims (a reshaped copy of a constant when its rank differs).
  static ir::Value* as_param(ir::Graph& g, ir::Value* p, const std::vector<int64_t>& norm,
                             xfmr::ConstantPool& pool) {
    if (p->shape().rank() == norm.size()) return p;
    return pool.get(g, p->name() + "_ln", constant_value(p)->reshaped(norm));
  }

  static void rewrite(ir::Graph& g, const Match& m, std::unordered_set<const ir::Node*>& removed,
                      xfmr::ConstantPool& pool) {
    const auto& xdims = m.x->shape().dims();
    std::vector<int64_t> norm;
    bool norm_static = true;
    for (auto it = xdims.end() + m.axis; it != xdims.end(); ++it) {
      norm.push_back(it->value);
      norm_static = norm_static && it->is_known();
    }
    ir::Value* gamma = nullptr;
    if (m.gamma != nullptr) {
      gamma = norm_static ? as_param(g, m.gamma, norm, pool) : m.gamma;
    } else {
      // LayerNormalization needs a scale; ones stand for "no gamma" (match() checked the dims).
      ir::Tensor ones(m.x->dtype(), norm);
      fill_ones(ones);
      gamma = pool.get(g, m.out->name() + "_scale", std::move(ones));
    }
    std::vector<ir::Value*> inputs{m.x, gamma};
    if (m.beta != nullptr) inputs.push_back(norm_static ? as_param(g, m.beta, norm, pool) : m.beta);
    ir::Node* anchor = m.out->producer();
    ir::Node* ln =
        xfmr::add_replacing_node(g, m.out, "LayerNormalization", "", inputs, anchor, m.nodes);
    ln->set_attr("axis", m.axis);
    ln->set_attr("epsilon", static_cast<float>(m.epsilon));
    xfmr::remove_dead(g, m.nodes, &removed);
  }

  static void fill_ones(ir::Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (t.dtype()) {
        case ir::DType::kFloat:
          t.mutable_data<float>()[i] = 1.0f;
          break;
        case ir::DType::kDouble:
          t.mutable_data<double>()[i] = 1.0;
          break;
        case ir::DType::kFloat16:
          t.mutable_data<uint16_t>()[i] = ir::float_to_half(1.0f);
          break;
        case ir::DType::kBFloat16:
          t.mutable_data<uint16_t>()[i] = ir::float_to_bfloat16(1.0f);
          break;
        default:
          break;
      }
    }
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseLayerNorm,
                   "fuses the decomposed mean/variance chain over trailing axes into "
                   "LayerNormalization (raising the model to opset 17 where every node allows)",
                   {{"fuse", 10}});

}  // namespace xopt::passes
