// Softmax(scale * Q'K' [+ mask]) V' with Q', K', V' the heads of projected Q, K, V (any
// Reshape/Transpose split) and the result merged back to tokens
// ==> com.microsoft.MultiHeadAttention(Q, K, V, bias, attention_bias; num_heads, scale,
//     unidirectional)
//
// What is emitted, exactly: query, key and value are [B,S,D] / [B,T,D] (the projection MatMuls,
// moved in front of any sequence-major transpose, or the projected values themselves); `bias` is
// the [3D] concatenation of the projection biases when there are any; `scale` is always set to the
// product of every scalar Mul/Div on Q, K and the scores. A constant causal mask (0 on and below
// the diagonal, <= -1e4 above, S = T) becomes unidirectional=1; any other mask becomes the
// additive `attention_bias` [B or 1, H or 1, S, T] (a constant, or the mask reshaped/expanded).
// key_padding_mask is never emitted. Where(cond, scores, fill) masks with a constant cond and a
// fill <= -1e4 count as additive masks of 0 / fill. torch's guard after the softmax,
// Where(IsNaN(P), 0, P) (its exporters emit it so that a row whose keys are all masked with -inf
// gives zeros, not NaN), folds in: MultiHeadAttention gives such rows zeros in both executors.
//
// The layout tracking that finds Q, K, V and the heads is in attention_layout.h.
#include <cmath>
#include <limits>
#include <map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "passes/fuse/attention_layout.h"
#include "passes/fuse/xfmr_match.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using namespace attention;  // NOLINT(google-build-using-namespace): the pass's own helpers
using xfmr::scalar_constant;
using xfmr::single_reader;
using xfmr::static_dims;

constexpr double kMaskedBelow = -1e4;  // additive mask entries at or below this mask a position

// Scores MatMul -> scalar Mul/Div -> mask Add or Where -> scalar Mul/Div -> Softmax.
struct ScoreChain {
  double scale = 1.0;         // every factor on the scores
  double mask_factor = 1.0;   // factors after the mask
  ir::Value* mask = nullptr;  // additive mask
  ir::Node* where = nullptr;  // or Where(cond, scores, fill) / Where(cond, fill, scores)
  bool keep_when_true = true;
  ir::Node* softmax = nullptr;
  std::vector<ir::Node*> nodes;
};

std::optional<ScoreChain> score_chain(ir::Node* scores_mm) {
  ScoreChain sc;
  ir::Value* v = scores_mm->output(0);
  auto dims = static_dims(v);
  if (!dims) return std::nullopt;
  for (;;) {
    ir::Node* r = single_reader(v);
    if (r == nullptr || r->num_outputs() != 1) return std::nullopt;
    if (r->is("Softmax")) {
      sc.softmax = r;
      break;
    }
    if (auto f = scale_factor(r, v)) {
      sc.scale *= *f;
      if (sc.mask != nullptr || sc.where != nullptr) sc.mask_factor *= *f;
    } else if (r->is("Add") && sc.mask == nullptr && sc.where == nullptr) {
      sc.mask = xfmr::other_input(r, v);
      if (sc.mask == nullptr) return std::nullopt;
    } else if (r->is("Where") && sc.mask == nullptr && sc.where == nullptr) {
      if (r->input(1) == v && r->input(2) != v) {
        sc.keep_when_true = true;
      } else if (r->input(2) == v && r->input(1) != v) {
        sc.keep_when_true = false;
      } else {
        return std::nullopt;
      }
      sc.where = r;
    } else {
      return std::nullopt;
    }
    // Nothing on the way may broadcast the scores to a larger shape.
    if (static_dims(r->output(0)) != dims) return std::nullopt;
    sc.nodes.push_back(r);
    v = r->output(0);
  }
  const auto rank = static_cast<int64_t>(dims->size());
  int64_t axis = sc.softmax->attr_int("axis", sc.softmax->opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return std::nullopt;
  sc.nodes.push_back(sc.softmax);
  return sc;
}

// The mask as MultiHeadAttention takes it.
struct MaskSpec {
  bool causal = false;
  std::optional<ir::Tensor> constant;  // attention_bias as a constant [mb, mh, S, T]
  ir::Value* value = nullptr;          // or computed: reshape to `dims4`, expand to `expand_to`
  std::vector<int64_t> value_dims;
  std::vector<int64_t> dims4;
  std::vector<int64_t> expand_to;
};

// Float tensor of `dims` from a bool or numeric constant mask.
std::optional<ir::Tensor> additive_from_where(const ScoreChain& sc) {
  auto cond = constant_value(sc.where->input(0));
  auto fill = scalar_constant(sc.where->input(sc.keep_when_true ? 2 : 1));
  if (!cond || cond->dtype() != ir::DType::kBool || !fill) return std::nullopt;
  if (!(*fill * sc.mask_factor <= kMaskedBelow)) return std::nullopt;
  ir::Tensor t(ir::DType::kFloat, cond->dims());
  const bool* c = cond->data<bool>();
  float* out = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    out[i] = (c[i] == sc.keep_when_true) ? 0.0f : static_cast<float>(*fill);
  return t;
}

std::optional<MaskSpec> mask_spec(const ScoreChain& sc, const Layout& scores_layout,
                                  const std::vector<int64_t>& sdims, const AxisSizes& sz) {
  MaskSpec spec;
  if (sc.mask == nullptr && sc.where == nullptr) return spec;
  std::optional<ir::Tensor> constant;
  std::vector<int64_t> md;
  if (sc.where != nullptr) {
    constant = additive_from_where(sc);
    if (!constant) return std::nullopt;
    md = constant->dims();
  } else {
    if (sc.mask->dtype() != ir::DType::kFloat) return std::nullopt;
    constant = constant_value(sc.mask);
    auto d = static_dims(sc.mask);
    if (!d) return std::nullopt;
    md = *d;
  }
  const size_t r = sdims.size();
  if (md.size() > r || r < 2) return std::nullopt;
  std::vector<int64_t> padded(r - md.size(), 1);
  padded.insert(padded.end(), md.begin(), md.end());
  const int64_t s = sdims[r - 2], t = sdims[r - 1];
  const int64_t ms = padded[r - 2];
  if (padded[r - 1] != t || (ms != s && ms != 1)) return std::nullopt;
  // Which of B and H the mask varies along: its non-1 leading dims, by the axes they hold.
  Group varied;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (padded[i] == 1) continue;
    if (padded[i] != sdims[i]) return std::nullopt;
    varied.insert(varied.end(), scores_layout[i].begin(), scores_layout[i].end());
  }
  const Group b = nontrivial({kB}, sz), h = nontrivial({kH}, sz), bh = nontrivial({kB, kH}, sz);
  if (!varied.empty() && varied != b && varied != h && varied != bh) return std::nullopt;
  const bool has_b = !b.empty() && std::find(varied.begin(), varied.end(), kB) != varied.end();
  const bool has_h = !h.empty() && std::find(varied.begin(), varied.end(), kH) != varied.end();
  const int64_t mb = has_b ? sz[kB] : 1, mh = has_h ? sz[kH] : 1;
  spec.dims4 = {mb, mh, ms, t};
  const std::vector<int64_t> full{mb, mh, s, t};

  if (!constant) {
    if (sc.mask_factor != 1.0) return std::nullopt;
    spec.value = sc.mask;
    spec.value_dims = md;
    if (ms != s) spec.expand_to = full;
    return spec;
  }
  if (constant->dtype() != ir::DType::kFloat) return std::nullopt;
  // Constant: reshape, broadcast the rows when the mask has one, and apply later factors.
  ir::Tensor m(ir::DType::kFloat, full);
  const float* src = constant->data<float>();
  float* dst = m.mutable_data<float>();
  for (int64_t i = 0; i < mb * mh; ++i)
    for (int64_t row = 0; row < s; ++row)
      for (int64_t col = 0; col < t; ++col)
        dst[(i * s + row) * t + col] =
            static_cast<float>(src[(i * ms + (ms == 1 ? 0 : row)) * t + col] * sc.mask_factor);
  // Every row keeps a position (a fully masked row would differ between Where and Add forms).
  for (int64_t i = 0; i < mb * mh * s; ++i) {
    bool kept = false;
    for (int64_t col = 0; col < t && !kept; ++col) kept = dst[i * t + col] > kMaskedBelow;
    if (!kept) return std::nullopt;
  }
  bool causal = mb == 1 && mh == 1 && s == t && s > 1;
  for (int64_t row = 0; row < s && causal; ++row)
    for (int64_t col = 0; col < t && causal; ++col) {
      float v = dst[row * t + col];
      causal = col <= row ? v == 0.0f : v <= kMaskedBelow;
    }
  if (causal) {
    spec.causal = true;
  } else {
    spec.constant = std::move(m);
  }
  return spec;
}

// One of query, key, value.
struct Side {
  Chain chain;
  Hypothesis hyp;
  int64_t seq = 0;
  std::optional<Projection> proj;
};

struct Match {
  ir::Node* scores_mm = nullptr;
  ir::Node* out_mm = nullptr;
  ScoreChain sc;
  Side q, k, v;
  AxisSizes sz;
  ir::Value* end = nullptr;  // the merged-heads result the fused node takes over
  bool end_seq_major = false;
  Layout end_layout;
  std::vector<ir::Node*> out_nodes;
  MaskSpec mask;
  double scale = 1.0;
  // torch's out_proj folded in: the Gemm over flattened tokens and the reshape back to [B,S,N]
  // become MatMul(attention, W) + bias on [B,S,*].
  struct OutProj {
    ir::Value* end = nullptr;  // [B,S,N], what MatMul + Add take over
    ir::Tensor weight;         // [H*Ev, N]
    std::optional<ir::Tensor> bias;
    ir::Value* weight_value = nullptr;  // the Gemm's own B or C when they already have that form
    ir::Value* bias_value = nullptr;
    std::vector<ir::Node*> nodes;
  };
  std::optional<OutProj> out_proj;
};

std::vector<int64_t> strip_ones(std::vector<int64_t> d) {
  size_t i = 0;
  while (i < d.size() && d[i] == 1) ++i;
  d.erase(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(i));
  return d;
}

// Tries the hypotheses for one side given the sizes fixed so far; returns its batch axes.
std::optional<Group> fit_side(Side& side, int seq_axis, int head_axis, int row, int col,
                              const AxisSizes& sz) {
  auto xd = static_dims(side.chain.source);
  if (!xd) return std::nullopt;
  for (const Hypothesis& h : hypotheses(*xd, side.seq)) {
    if (h.batch != sz[kB]) continue;
    auto l = simulate(side.chain, source_layout(h, xd->size(), seq_axis, head_axis, sz), sz);
    if (!l) continue;
    auto batch = operand_batch(*l, row, col, sz);
    if (!batch) continue;
    side.hyp = h;
    return batch;
  }
  return std::nullopt;
}

// torch's out_proj on the merged heads: Gemm(end [S*B or B*S, H*Ev], W, c) (transA 0, alpha and
// beta 1, c a 1-D bias) followed by Reshape/Transpose back to [B,S,N] with the tokens in order.
std::optional<Match::OutProj> out_projection(const Match& m) {
  auto ed = static_dims(m.end);
  ir::Node* g = single_reader(m.end);
  if (!ed || ed->size() != 2 || g == nullptr || !g->is("Gemm") || g->input(0) != m.end)
    return std::nullopt;
  if (g->attr_int("transA", 0) != 0 || g->attr_float("alpha", 1.0f) != 1.0f ||
      g->attr_float("beta", 1.0f) != 1.0f)
    return std::nullopt;
  auto w = constant_value(g->input(1));
  if (!w || w->rank() != 2 || w->dtype() != ir::DType::kFloat) return std::nullopt;
  const bool trans_b = g->attr_int("transB", 0) != 0;
  const int64_t k = trans_b ? w->dims()[1] : w->dims()[0];
  const int64_t n = trans_b ? w->dims()[0] : w->dims()[1];
  if (k != (*ed)[1]) return std::nullopt;
  Match::OutProj op;
  if (g->input(2) != nullptr) {
    auto c = constant_value(g->input(2));
    if (!c || c->dtype() != ir::DType::kFloat || c->numel() != n || c->rank() == 0 ||
        c->dims().back() != n || (c->rank() == 2 && c->dims()[0] != 1) || c->rank() > 2)
      return std::nullopt;
    op.bias = c->reshaped({n});
    if (c->rank() == 1) op.bias_value = g->input(2);
  }
  op.weight = trans_b ? xfmr::transpose_2d(*w) : *w;
  if (!trans_b) op.weight_value = g->input(1);
  AxisSizes sz = m.sz;
  sz[kO] = n;
  Layout l{m.end_layout[0], nontrivial({kO}, sz)};
  ir::Value* cur = g->output(0);
  std::vector<ir::Node*> walked{g};
  const std::vector<int64_t> target{sz[kB], sz[kS], n};
  for (ir::Node* r = single_reader(cur); r != nullptr; r = single_reader(cur)) {
    if (!(r->is("Transpose") || is_view(r)) || r->num_outputs() != 1) break;
    auto next = apply(r, l, sz);
    if (!next) break;
    l = std::move(*next);
    cur = r->output(0);
    walked.push_back(r);
    if (flatten(l) == nontrivial({kB, kS, kO}, sz) && static_dims(cur) == target) {
      op.end = cur;
      op.nodes = walked;
    }
  }
  if (op.end == nullptr) return std::nullopt;
  return op;
}

// Where(IsNaN(p), 0, p), p read by nothing else: the two guard nodes.
std::optional<std::pair<ir::Node*, ir::Node*>> nan_guard(ir::Value* p) {
  if (p->uses().size() != 2 || name_is_visible(p)) return std::nullopt;
  ir::Node* isnan = nullptr;
  ir::Node* where = nullptr;
  for (const ir::Use& u : p->uses()) {
    if (u.node->is("IsNaN")) isnan = u.node;
    if (u.node->is("Where")) where = u.node;
  }
  if (isnan == nullptr || where == nullptr || single_reader(isnan->output(0)) != where ||
      where->input(0) != isnan->output(0) || where->input(2) != p)
    return std::nullopt;
  auto zero = scalar_constant(where->input(1));
  if (!zero || *zero != 0.0 || static_dims(where->output(0)) != static_dims(p)) return std::nullopt;
  return std::make_pair(isnan, where);
}

std::optional<Match> match(ir::Node* scores_mm) {
  Match m;
  m.scores_mm = scores_mm;
  auto sc = score_chain(scores_mm);
  if (!sc) return std::nullopt;
  m.sc = std::move(*sc);
  ir::Value* probs = m.sc.softmax->output(0);
  if (auto guard = nan_guard(probs)) {
    m.sc.nodes.push_back(guard->first);
    m.sc.nodes.push_back(guard->second);
    probs = guard->second->output(0);
  }
  m.out_mm = single_reader(probs);
  if (m.out_mm == nullptr || !m.out_mm->is("MatMul") || m.out_mm->input(0) != probs)
    return std::nullopt;
  ir::Value* qq = scores_mm->input(0);
  ir::Value* kk = scores_mm->input(1);
  ir::Value* vv = m.out_mm->input(1);
  auto qd = static_dims(qq), kd = static_dims(kk), vd = static_dims(vv);
  auto od = static_dims(m.out_mm->output(0)), sd = static_dims(scores_mm->output(0));
  if (!qd || !kd || !vd || !od || !sd || qd->size() < 2 || kd->size() < 2 || vd->size() < 2)
    return std::nullopt;
  if (qq->dtype() != ir::DType::kFloat) return std::nullopt;
  auto last = [](const std::vector<int64_t>& d, size_t i) { return d[d.size() - 1 - i]; };
  AxisSizes& sz = m.sz;
  sz[kS] = last(*qd, 1);
  sz[kE] = last(*qd, 0);
  sz[kT] = last(*kd, 0);
  sz[kEv] = last(*vd, 0);
  if (last(*kd, 1) != sz[kE] || last(*vd, 1) != sz[kT] || sz[kEv] != sz[kE]) return std::nullopt;
  auto batch_of = [](const std::vector<int64_t>& d) {
    return strip_ones(std::vector<int64_t>(d.begin(), d.end() - 2));
  };
  if (batch_of(*qd) != batch_of(*kd) || batch_of(*qd) != batch_of(*vd)) return std::nullopt;

  m.q.chain = walk_back(qq, scores_mm, true);
  m.k.chain = walk_back(kk, scores_mm, true);
  m.v.chain = walk_back(vv, m.out_mm, false);
  m.q.seq = sz[kS];
  m.k.seq = m.v.seq = sz[kT];
  auto xq = static_dims(m.q.chain.source), xk = static_dims(m.k.chain.source),
       xv = static_dims(m.v.chain.source);
  if (!xq || !xk || !xv || xq->empty() || xk->empty() || xv->empty()) return std::nullopt;
  if (xq->back() % sz[kE] != 0) return std::nullopt;
  sz[kH] = xq->back() / sz[kE];
  if (xk->back() != sz[kH] * sz[kE] || xv->back() != sz[kH] * sz[kEv]) return std::nullopt;

  std::optional<Group> batch;
  auto qs = static_dims(m.q.chain.source);
  for (const Hypothesis& h : hypotheses(*qs, sz[kS])) {
    sz[kB] = h.batch;
    auto qb = fit_side(m.q, kS, kE, kS, kE, sz);
    if (!qb) continue;
    auto kb = fit_side(m.k, kT, kE, kE, kT, sz);
    auto vb = fit_side(m.v, kT, kEv, kT, kEv, sz);
    if (!kb || !vb || *kb != *qb || *vb != *qb) continue;
    batch = qb;
    break;
  }
  if (!batch) return std::nullopt;

  // Follow the result back to tokens, as far as the Reshape/Transpose chain goes.
  Group o_axes = *batch;
  for (int a : nontrivial({kS, kEv}, sz)) o_axes.push_back(a);
  auto lo = regroup(o_axes, *od, sz);
  if (!lo) return std::nullopt;
  ir::Value* cur = m.out_mm->output(0);
  Layout l = *lo;
  if (auto order = token_order(l, sz)) {
    m.end = cur;
    m.end_seq_major = *order;
    m.end_layout = l;
  }
  std::vector<ir::Node*> walked;
  for (ir::Node* r = single_reader(cur); r != nullptr; r = single_reader(cur)) {
    if (!(r->is("Transpose") || is_view(r)) || r->num_outputs() != 1) break;
    auto next = apply(r, l, sz);
    if (!next) break;
    l = std::move(*next);
    cur = r->output(0);
    walked.push_back(r);
    if (auto order = token_order(l, sz)) {
      m.end = cur;
      m.end_seq_major = *order;
      m.end_layout = l;
      m.out_nodes = walked;
    }
  }
  if (m.end == nullptr) return std::nullopt;
  m.out_proj = out_projection(m);

  Group s_axes = *batch;
  for (int a : nontrivial({kS, kT}, sz)) s_axes.push_back(a);
  auto ls = regroup(s_axes, *sd, sz);
  if (!ls) return std::nullopt;
  auto mask = mask_spec(m.sc, *ls, *sd, sz);
  if (!mask) return std::nullopt;
  m.mask = std::move(*mask);
  m.scale = m.q.chain.scale * m.k.chain.scale * m.sc.scale;
  if (!std::isfinite(m.scale) || m.scale == 0) return std::nullopt;

  // Projections whose outputs only this attention reads are folded in (their MatMul moves in
  // front of any transpose and the bias joins MultiHeadAttention's bias input).
  std::vector<ir::Node*> inside{scores_mm, m.out_mm};
  std::vector<Side*> sides{&m.q, &m.k, &m.v};
  for (Side* s : sides) {
    s->proj = projection(s->chain.source);
    if (s->proj) inside.insert(inside.end(), s->proj->nodes.begin(), s->proj->nodes.end());
    inside.insert(inside.end(), s->chain.nodes.begin(), s->chain.nodes.end());
  }
  for (Side* s : sides)
    if (s->proj && !xfmr::only_read_by(s->proj->packed, inside)) s->proj.reset();
  return m;
}

class Rewriter {
 public:
  Rewriter(ir::Graph& g, Match& m, xfmr::ConstantPool& pool)
      : g_(g),
        m_(m),
        pool_(pool),
        anchor_(m.out_proj ? m.out_proj->end->producer() : m.end->producer()) {}

  void run(std::unordered_set<const ir::Node*>& removed) {
    const AxisSizes& sz = m_.sz;
    std::vector<ir::Value*> qkv;
    std::vector<ir::Tensor> biases;
    bool any_bias = false;
    for (Side* s : {&m_.q, &m_.k, &m_.v}) {
      const int64_t d = sz[kH] * (s == &m_.v ? sz[kEv] : sz[kE]);
      ir::Value* in;
      if (s->proj) {
        ir::Value* y = to_tokens(s->proj->input, s->hyp.seq_major, s->seq);
        ir::Value* w = s->proj->weight_value;
        if (w == nullptr) w = pool_.get(g_, weight_name(*s), s->proj->weight);
        ir::Node* mm = xfmr::add_node(g_, "MatMul", {y, w}, base_ + "mha_" + side_name(*s),
                                      ir::DType::kFloat, {sz[kB], s->seq, d}, anchor_);
        for (const ir::Node* r : s->proj->nodes) mm->add_provenance(*r);
        in = mm->output(0);
        any_bias |= s->proj->bias.has_value();
      } else {
        in = to_tokens(s->chain.source, s->hyp.seq_major, s->seq);
      }
      qkv.push_back(in);
      biases.push_back(s->proj && s->proj->bias ? *s->proj->bias
                                                : ir::Tensor(ir::DType::kFloat, {d}));
    }
    std::vector<ir::Value*> inputs = qkv;
    inputs.push_back(any_bias ? pool_.get(g_, base_ + "mha_qkv_bias", xfmr::concat_flat(biases))
                              : nullptr);
    inputs.push_back(nullptr);  // key_padding_mask
    inputs.push_back(attention_bias());
    while (inputs.back() == nullptr) inputs.pop_back();

    // MultiHeadAttention gives [B,S,H*Ev]; the value it replaces may be sequence-major or
    // flattened.
    const int64_t b = sz[kB], s = sz[kS], hd = sz[kH] * sz[kEv];
    auto ed = *static_dims(m_.end);
    const bool transpose = m_.end_seq_major && b > 1 && s > 1;
    const std::vector<int64_t> after_t =
        transpose ? std::vector<int64_t>{s, b, hd} : std::vector<int64_t>{b, s, hd};
    const bool reshape = after_t != ed;
    std::vector<ir::Node*> replaced = pattern_nodes();
    ir::Node* mha;
    if (m_.out_proj) {
      const Match::OutProj& op = *m_.out_proj;
      const int64_t n = op.weight.dims()[1];
      mha = xfmr::add_node(g_, "MultiHeadAttention", inputs, base_ + "mha", ir::DType::kFloat,
                           {b, s, hd}, anchor_, "com.microsoft");
      for (ir::Node* r : replaced) mha->add_provenance(*r);
      ir::Value* w = op.weight_value != nullptr
                         ? op.weight_value
                         : pool_.get(g_, op.nodes.front()->input(1)->name() + "_t", op.weight);
      if (op.bias) {
        ir::Value* mm = xfmr::add_node(g_, "MatMul", {mha->output(0), w}, base_ + "out_proj",
                                       ir::DType::kFloat, {b, s, n}, anchor_)
                            ->output(0);
        ir::Value* c = op.bias_value != nullptr
                           ? op.bias_value
                           : pool_.get(g_, op.nodes.front()->input(2)->name() + "_n", *op.bias);
        xfmr::add_replacing_node(g_, op.end, "Add", "", {mm, c}, anchor_, {op.nodes.front()});
      } else {
        xfmr::add_replacing_node(g_, op.end, "MatMul", "", {mha->output(0), w}, anchor_,
                                 {op.nodes.front()});
      }
    } else if (!transpose && !reshape) {
      mha = xfmr::add_replacing_node(g_, m_.end, "MultiHeadAttention", "com.microsoft", inputs,
                                     anchor_, replaced);
    } else {
      mha = xfmr::add_node(g_, "MultiHeadAttention", inputs, base_ + "mha", ir::DType::kFloat,
                           {b, s, hd}, anchor_, "com.microsoft");
      for (ir::Node* r : replaced) mha->add_provenance(*r);
      ir::Value* cur = mha->output(0);
      if (transpose) {
        ir::Node* t =
            reshape ? xfmr::add_node(g_, "Transpose", {cur}, base_ + "mha_sbd", ir::DType::kFloat,
                                     after_t, anchor_)
                    : xfmr::add_replacing_node(g_, m_.end, "Transpose", "", {cur}, anchor_, {});
        t->set_attr("perm", std::vector<int64_t>{1, 0, 2});
        cur = t->output(0);
      }
      if (reshape)
        xfmr::add_replacing_node(g_, m_.end, "Reshape", "",
                                 {cur, shape_constant(base_ + "mha_out_shape", ed)}, anchor_, {});
    }
    mha->set_name(base_ + "MultiHeadAttention");
    mha->set_attr("num_heads", sz[kH]);
    mha->set_attr("scale", static_cast<float>(m_.scale));
    if (m_.mask.causal) mha->set_attr("unidirectional", int64_t{1});
    replaced.insert(replaced.end(), extra_dead_.begin(), extra_dead_.end());
    xfmr::remove_dead(g_, replaced, &removed);
  }

  std::string base_;

 private:
  std::string side_name(const Side& s) const { return &s == &m_.q ? "q" : &s == &m_.k ? "k" : "v"; }
  std::string weight_name(const Side& s) const {
    return s.proj->nodes.back()->input(1)->name() + "_" + side_name(s);
  }

  std::vector<ir::Node*> pattern_nodes() const {
    std::vector<ir::Node*> out{m_.scores_mm, m_.out_mm};
    out.insert(out.end(), m_.sc.nodes.begin(), m_.sc.nodes.end());
    out.insert(out.end(), m_.out_nodes.begin(), m_.out_nodes.end());
    if (m_.out_proj) out.insert(out.end(), m_.out_proj->nodes.begin(), m_.out_proj->nodes.end());
    for (const Side* s : {&m_.q, &m_.k, &m_.v}) {
      out.insert(out.end(), s->chain.nodes.begin(), s->chain.nodes.end());
      if (s->proj) out.insert(out.end(), s->proj->nodes.begin(), s->proj->nodes.end());
    }
    return out;
  }

  // `v` ([B,seq,..] / [seq,B,..] / [B*seq,..] / [seq*B,..] by `seq_major` and rank) as
  // [B,seq,last].
  ir::Value* to_tokens(ir::Value* v, bool seq_major, int64_t seq) {
    auto key = std::make_pair(v, seq_major);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    auto dims = *static_dims(v);
    const int64_t b = m_.sz[kB], last = dims.back();
    const std::vector<int64_t> target{b, seq, last};
    ir::Value* out = v;
    const bool swap = seq_major && b > 1 && seq > 1;
    ir::Node* p = v->producer();
    if (dims.size() == 3 && seq_major && p != nullptr && p->is("Transpose") &&
        p->attr_ints("perm") == std::vector<int64_t>{1, 0, 2} &&
        static_dims(p->input(0)) == target) {
      out = p->input(0);  // undo the exporter's own [B,S,D] -> [S,B,D] transpose
      extra_dead_.push_back(p);
    } else if (dims.size() == 3 && swap) {
      ir::Node* t = xfmr::add_node(g_, "Transpose", {v}, v->name() + "_bsd", ir::DType::kFloat,
                                   target, anchor_);
      t->set_attr("perm", std::vector<int64_t>{1, 0, 2});
      out = t->output(0);
    } else if (dims.size() == 2 && swap) {
      ir::Node* r = xfmr::add_node(g_, "Reshape",
                                   {v, shape_constant(v->name() + "_sbd_shape", {seq, b, last})},
                                   v->name() + "_sbd", ir::DType::kFloat, {seq, b, last}, anchor_);
      ir::Node* t = xfmr::add_node(g_, "Transpose", {r->output(0)}, v->name() + "_bsd",
                                   ir::DType::kFloat, target, anchor_);
      t->set_attr("perm", std::vector<int64_t>{1, 0, 2});
      out = t->output(0);
    } else if (dims != target) {
      out = xfmr::add_node(g_, "Reshape", {v, shape_constant(v->name() + "_bsd_shape", target)},
                           v->name() + "_bsd", ir::DType::kFloat, target, anchor_)
                ->output(0);
    }
    cache_[key] = out;
    return out;
  }

  ir::Value* attention_bias() {
    const MaskSpec& ms = m_.mask;
    if (ms.constant) return pool_.get(g_, base_ + "mha_attention_bias", *ms.constant);
    if (ms.value == nullptr) return nullptr;
    ir::Value* v = ms.value;
    if (ms.value_dims != ms.dims4)
      v = xfmr::add_node(g_, "Reshape",
                         {v, shape_constant(base_ + "mha_attention_bias_shape", ms.dims4)},
                         base_ + "mha_attention_bias_4d", ir::DType::kFloat, ms.dims4, anchor_)
              ->output(0);
    if (!ms.expand_to.empty())
      v = xfmr::add_node(g_, "Expand",
                         {v, shape_constant(base_ + "mha_attention_bias_dims", ms.expand_to)},
                         base_ + "mha_attention_bias", ir::DType::kFloat, ms.expand_to, anchor_)
              ->output(0);
    return v;
  }

  ir::Value* shape_constant(const std::string& hint, const std::vector<int64_t>& dims) {
    return pool_.get(g_, hint, ir::Tensor::of<int64_t>({static_cast<int64_t>(dims.size())}, dims));
  }

  ir::Graph& g_;
  Match& m_;
  xfmr::ConstantPool& pool_;
  ir::Node* anchor_;
  std::map<std::pair<ir::Value*, bool>, ir::Value*> cache_;
  std::vector<ir::Node*> extra_dead_;
};

class FuseAttention final : public Pass {
 public:
  static constexpr std::string_view kName = "fuse-attention";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    bool shapes_ready = false;
    std::unordered_set<const ir::Node*> removed;
    xfmr::ConstantPool pool;
    for (ir::Node* n : g.node_list()) {
      if (removed.count(n) || !n->is("MatMul")) continue;
      if (!shapes_ready) {
        XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
        shapes_ready = true;
      }
      auto m = match(n);
      if (!m) continue;
      g.require_opset("com.microsoft", 1);
      Rewriter rw(g, *m, pool);
      rw.base_ = prefix(*m);
      rw.run(removed);
      ctx.count("MultiHeadAttention");
      if (m->out_proj) ctx.count("out-projection");
      if (m->mask.causal) ctx.count("causal");
      if (m->mask.constant || m->mask.value != nullptr) ctx.count("attention_bias");
      changed = true;
    }
    return changed;
  }

 private:
  // New values are named after the softmax's node ("/layers.0/self_attn/Softmax" ->
  // "/layers.0/self_attn/"), so they read as part of the block they replace.
  static std::string prefix(const Match& m) {
    std::string name = m.sc.softmax->name();
    size_t slash = name.rfind('/');
    if (slash != std::string::npos) return name.substr(0, slash + 1);
    return name.empty() ? std::string() : name + "_";
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseAttention,
                   "fuses scaled dot-product attention with its head split/merge and Q/K/V "
                   "projections into com.microsoft.MultiHeadAttention",
                   {{"fuse", 14}});

}  // namespace xopt::passes
