#include "passes/fuse/attention_layout.h"

#include <algorithm>
#include <limits>

#include "passes/fuse/xfmr_match.h"
#include "passes/rewrite.h"

namespace xopt::passes::attention {

Group nontrivial(std::initializer_list<int> axes, const AxisSizes& sz) {
  Group g;
  for (int a : axes)
    if (sz[a] != 1) g.push_back(a);
  return g;
}

Group flatten(const Layout& l) {
  Group g;
  for (const Group& d : l) g.insert(g.end(), d.begin(), d.end());
  return g;
}

std::optional<Layout> regroup(const Group& axes, const std::vector<int64_t>& dims,
                              const AxisSizes& sz) {
  Layout out;
  size_t i = 0;
  for (int64_t d : dims) {
    if (d <= 0) return std::nullopt;
    Group g;
    int64_t p = 1;
    while (p < d && i < axes.size()) {
      g.push_back(axes[i]);
      p *= sz[axes[i]];
      ++i;
    }
    if (p != d) return std::nullopt;
    out.push_back(std::move(g));
  }
  if (i != axes.size()) return std::nullopt;
  return out;
}

bool is_view(const ir::Node* n) {
  return n->is("Reshape") || n->is("Squeeze") || n->is("Unsqueeze") || n->is("Flatten") ||
         n->is("Identity");
}

std::optional<double> scale_factor(const ir::Node* n, const ir::Value* v) {
  if (n->num_inputs() != 2) return std::nullopt;
  if (n->is("Mul")) {
    ir::Value* c = xfmr::other_input(n, v);
    auto f = c != nullptr ? xfmr::scalar_constant(c) : std::nullopt;
    if (f && c->shape().has_rank() && c->shape().rank() <= v->shape().rank()) return f;
  }
  if (n->is("Div") && n->input(0) == v && n->input(1) != v) {
    auto f = xfmr::scalar_constant(n->input(1));
    if (f && *f != 0 && n->input(1)->shape().has_rank() &&
        n->input(1)->shape().rank() <= v->shape().rank())
      return 1.0 / *f;
  }
  return std::nullopt;
}

Chain walk_back(ir::Value* operand, ir::Node* reader, bool allow_scale) {
  Chain c;
  ir::Value* v = operand;
  ir::Node* r = reader;
  for (;;) {
    ir::Node* p = v->producer();
    if (p == nullptr || xfmr::single_reader(v) != r || p->num_outputs() != 1) break;
    if ((p->is("Transpose") || is_view(p)) && p->input(0) != nullptr) {
      c.nodes.push_back(p);
      v = p->input(0);
      r = p;
      continue;
    }
    if (allow_scale && (p->is("Mul") || p->is("Div"))) {
      ir::Value* x = nullptr;
      std::optional<double> f;
      for (ir::Value* in : p->inputs()) {
        if (in == nullptr || xfmr::scalar_constant(in)) continue;
        f = scale_factor(p, in);
        x = in;
        break;
      }
      if (x != nullptr && f) {
        c.nodes.push_back(p);
        c.scale *= *f;
        v = x;
        r = p;
        continue;
      }
    }
    break;
  }
  std::reverse(c.nodes.begin(), c.nodes.end());
  c.source = v;
  return c;
}

namespace {
bool sizes_match(const Layout& l, const std::vector<int64_t>& dims, const AxisSizes& sz) {
  if (l.size() != dims.size()) return false;
  for (size_t i = 0; i < l.size(); ++i) {
    int64_t p = 1;
    for (int a : l[i]) p *= sz[a];
    if (p != dims[i]) return false;
  }
  return true;
}
}  // namespace

std::optional<Layout> apply(const ir::Node* n, const Layout& l, const AxisSizes& sz) {
  auto dims = xfmr::static_dims(n->output(0));
  if (!dims) return std::nullopt;
  Layout out;
  if (n->is("Transpose")) {
    std::vector<int64_t> perm = n->attr_ints("perm");
    if (!n->has_attr("perm"))
      for (size_t i = l.size(); i > 0; --i) perm.push_back(static_cast<int64_t>(i - 1));
    if (perm.size() != l.size()) return std::nullopt;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(l.size())) return std::nullopt;
      out.push_back(l[static_cast<size_t>(p)]);
    }
  } else if (is_view(n)) {
    auto r = regroup(flatten(l), *dims, sz);
    if (!r) return std::nullopt;
    out = std::move(*r);
  } else {
    out = l;  // a scalar Mul/Div keeps the layout
  }
  if (!sizes_match(out, *dims, sz)) return std::nullopt;
  return out;
}

std::optional<Layout> simulate(const Chain& c, Layout start, const AxisSizes& sz) {
  auto sd = xfmr::static_dims(c.source);
  if (!sd || !sizes_match(start, *sd, sz)) return std::nullopt;
  for (const ir::Node* n : c.nodes) {
    auto next = apply(n, start, sz);
    if (!next) return std::nullopt;
    start = std::move(*next);
  }
  return start;
}

std::vector<Hypothesis> hypotheses(const std::vector<int64_t>& dims, int64_t seq) {
  std::vector<Hypothesis> out;
  if (seq <= 0) return out;
  if (dims.size() == 3) {
    if (dims[1] == seq) out.push_back({false, dims[0]});
    if (dims[0] == seq) out.push_back({true, dims[1]});
  } else if (dims.size() == 2 && dims[0] % seq == 0) {
    out.push_back({false, dims[0] / seq});
    out.push_back({true, dims[0] / seq});
  }
  return out;
}

Layout source_layout(const Hypothesis& h, size_t rank, int seq_axis, int head_axis,
                     const AxisSizes& sz) {
  Group b = nontrivial({kB}, sz), s = nontrivial({seq_axis}, sz);
  Group hidden = nontrivial({kH, head_axis}, sz);
  Layout l;
  if (rank == 3) {
    l = h.seq_major ? Layout{s, b, hidden} : Layout{b, s, hidden};
  } else {
    Group lead = h.seq_major ? s : b;
    const Group& second = h.seq_major ? b : s;
    lead.insert(lead.end(), second.begin(), second.end());
    l = Layout{lead, hidden};
  }
  return l;
}

std::optional<Group> operand_batch(const Layout& l, int row, int col, const AxisSizes& sz) {
  const size_t r = l.size();
  if (r < 2 || l[r - 2] != nontrivial({row}, sz) || l[r - 1] != nontrivial({col}, sz))
    return std::nullopt;
  Group batch = flatten(Layout(l.begin(), l.end() - 2));
  Group sorted = batch;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != nontrivial({kB, kH}, sz)) return std::nullopt;
  return batch;
}

std::optional<bool> token_order(const Layout& l, const AxisSizes& sz) {
  Group f = flatten(l);
  if (f == nontrivial({kB, kS, kH, kEv}, sz)) return false;
  if (f == nontrivial({kS, kB, kH, kEv}, sz)) return true;
  return std::nullopt;
}

namespace {

// Slice of one axis with constant parameters: (axis, start, end) clamped to `dims`, step 1.
struct SliceRange {
  int64_t axis, start, end;
};
std::optional<SliceRange> slice_range(const ir::Node* s, const std::vector<int64_t>& dims) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (s->opset() < 10) {
    starts = s->attr_ints("starts");
    ends = s->attr_ints("ends");
    axes = s->attr_ints("axes");
  } else {
    auto get = [&](size_t i, std::vector<int64_t>& out) {
      if (s->input(i) == nullptr) return true;
      auto t = constant_value(s->input(i));
      if (!t) return false;
      out = t->to_int64_vector();
      return true;
    };
    if (s->input(1) == nullptr || s->input(2) == nullptr || !get(1, starts) || !get(2, ends) ||
        !get(3, axes) || !get(4, steps))
      return std::nullopt;
  }
  if (starts.size() != 1 || ends.size() != 1) return std::nullopt;
  const auto rank = static_cast<int64_t>(dims.size());
  int64_t axis = axes.empty() ? 0 : axes[0];
  if (axes.size() > 1 || (!steps.empty() && (steps.size() != 1 || steps[0] != 1)))
    return std::nullopt;
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  const int64_t d = dims[static_cast<size_t>(axis)];
  auto clamp = [d](int64_t v) {
    if (v < 0) v += d;
    return std::clamp<int64_t>(v, 0, d);
  };
  return SliceRange{axis, clamp(starts[0]), clamp(ends[0])};
}

}  // namespace

std::optional<Projection> projection(ir::Value* source) {
  auto xd = xfmr::static_dims(source);
  if (!xd || xd->empty()) return std::nullopt;
  Projection p;
  const int64_t d = xd->back();
  int64_t offset = 0;
  ir::Value* packed = source;
  if (ir::Node* s = source->producer(); s != nullptr && s->is("Slice")) {
    auto pd = xfmr::static_dims(s->input(0));
    if (!pd || pd->size() != xd->size()) return std::nullopt;
    auto range = slice_range(s, *pd);
    if (!range || range->axis != static_cast<int64_t>(pd->size()) - 1 ||
        range->end - range->start != d)
      return std::nullopt;
    offset = range->start;
    packed = s->input(0);
    p.nodes.push_back(s);
  }
  auto pd = xfmr::static_dims(packed);
  if (!pd) return std::nullopt;
  const int64_t total = pd->back();
  ir::Node* producer = packed->producer();
  if (producer == nullptr) return std::nullopt;
  ir::Value* mm_out = packed;
  std::optional<ir::Tensor> full_bias;
  if (producer->is("Add")) {
    for (size_t i = 0; i < 2 && !full_bias; ++i) {
      ir::Value* c = producer->input(i);
      ir::Value* other = producer->input(1 - i);
      auto t = constant_value(c);
      if (!t || other == nullptr || other->producer() == nullptr ||
          !other->producer()->is("MatMul") || xfmr::single_reader(other) != producer)
        continue;
      if (t->numel() != total || t->rank() == 0 || t->dims().back() != total) continue;
      full_bias = t->reshaped({total});
      mm_out = other;
    }
    if (!full_bias) return std::nullopt;
    p.nodes.push_back(producer);
  }
  ir::Node* mm = mm_out->producer();
  if (mm == nullptr || !mm->is("MatMul")) return std::nullopt;
  auto w = constant_value(mm->input(1));
  auto yd = xfmr::static_dims(mm->input(0));
  if (!w || w->rank() != 2 || w->dims()[1] != total || !yd || yd->size() != pd->size())
    return std::nullopt;
  if (w->dtype() != source->dtype()) return std::nullopt;
  p.input = mm->input(0);
  if (offset == 0 && d == total) {
    p.weight_value = mm->input(1);
    p.weight = *w;
  } else {
    p.weight = xfmr::slice_columns(*w, offset, d);
  }
  if (full_bias) p.bias = xfmr::slice_flat(*full_bias, offset, d);
  p.packed = packed;
  p.nodes.push_back(mm);
  return p;
}

}  // namespace xopt::passes::attention
