// Layout tracking for fuse-attention.
//
// Exporters split the projected query, key and value into heads with every combination of
// Reshape and Transpose there is ([B,S,D] -> [B,S,H,E] -> [B,H,S,E]; torch's sequence-major
// [S,B,D] -> [S,B*H,E] -> [B*H,S,E]; ...). Instead of listing those shapes, the pass names the
// logical axes (batch B, query length S, key length T, heads H, head size E / Ev) and follows them
// through each Reshape and Transpose: a tensor's layout is, per dimension, the logical axes merged
// into it in row-major order. Axes of size 1 are left out, since where they sit does not change
// the bytes. A Reshape regroups the same axis sequence into new dims (it fails when it would have
// to split an axis); a Transpose permutes dims. The attention is recognised when the MatMul
// operands come out as [batch axes..., S, E] x [batch axes..., E, T] x [batch axes..., T, Ev] with
// the same batch axes (B and H in some order) and the result can be followed back to a token
// layout [B,S,H*Ev] or [S,B,H*Ev].
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::passes::attention {

// kO: the output features of torch's out_proj Gemm, when that is folded in too.
enum Axis : int { kB = 0, kS, kT, kH, kE, kEv, kO, kNumAxes };

using Group = std::vector<int>;  // logical axes merged into one dim, outermost first
using Layout = std::vector<Group>;

struct AxisSizes {
  std::array<int64_t, kNumAxes> size{};
  int64_t operator[](int a) const { return size[static_cast<size_t>(a)]; }
  int64_t& operator[](int a) { return size[static_cast<size_t>(a)]; }
};

// The axes of `axes` whose size is not 1, in order.
Group nontrivial(std::initializer_list<int> axes, const AxisSizes& sz);
Group flatten(const Layout& l);
// Groups the axis sequence `axes` into dims of the given sizes; nullopt when a dim would need part
// of an axis.
std::optional<Layout> regroup(const Group& axes, const std::vector<int64_t>& dims,
                              const AxisSizes& sz);

// Reshape-like ops: the output is the input's bytes under the output's (static) dims.
bool is_view(const ir::Node* n);
// When `n` multiplies `v` by a scalar constant (Mul(v, c), Mul(c, v), Div(v, c)): the factor.
std::optional<double> scale_factor(const ir::Node* n, const ir::Value* v);

// The layout-only chain in front of a MatMul operand: from `source` through Transpose, view ops
// and (when allowed) scalar Mul/Div, each value read only by the next node.
struct Chain {
  ir::Value* source = nullptr;
  std::vector<ir::Node*> nodes;  // source side first
  double scale = 1.0;
};
Chain walk_back(ir::Value* operand, ir::Node* reader, bool allow_scale);

// Applies the chain's nodes to `start` (the source's layout); nullopt when an op does not map.
std::optional<Layout> simulate(const Chain& c, Layout start, const AxisSizes& sz);
// One Transpose or view node applied to `l`.
std::optional<Layout> apply(const ir::Node* n, const Layout& l, const AxisSizes& sz);

// How a projection output's leading dims hold batch and sequence: [B,S,..] / [B*S,..] or
// sequence-major [S,B,..] / [S*B,..].
struct Hypothesis {
  bool seq_major = false;
  int64_t batch = 0;
};
std::vector<Hypothesis> hypotheses(const std::vector<int64_t>& dims, int64_t seq);
// The layout of a source of `dims` under `h`: leading dims B and `seq_axis`, last dim H x `head`.
Layout source_layout(const Hypothesis& h, size_t rank, int seq_axis, int head_axis,
                     const AxisSizes& sz);

// A MatMul operand whose last two dims hold `row` and `col`: its batch axes (flattened), which
// must be B and H in some order.
std::optional<Group> operand_batch(const Layout& l, int row, int col, const AxisSizes& sz);
// [B,S,H,Ev] (false) or [S,B,H,Ev] (true) order, or nullopt.
std::optional<bool> token_order(const Layout& l, const AxisSizes& sz);

// A recognised input projection: source = [Slice(last axis) of] MatMul(input, W) [+ bias].
struct Projection {
  ir::Value* input = nullptr;         // the MatMul's activation input
  ir::Value* weight_value = nullptr;  // W itself when the slice takes all of it
  ir::Tensor weight;                  // the columns this source uses, [Din, D]
  std::optional<ir::Tensor> bias;     // [D]
  ir::Value* packed = nullptr;        // the projection output before the Slice
  std::vector<ir::Node*> nodes;       // Slice, Add, MatMul
};
std::optional<Projection> projection(ir::Value* source);

}  // namespace xopt::passes::attention
