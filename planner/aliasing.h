// Aliasing: values that reuse another value's bytes instead of getting their own.
//   views     Reshape, Flatten, Squeeze, Unsqueeze, Identity and inference Dropout (output 0) share
//   their
//             input's bytes; the root's lifetime grows to cover the view's.
//   in-place  an elementwise op writes its output over an input that dies at that op, when both
//             have the same bytes and element size (ggml-alloc's "reuse the parent in place"); a
//             FusedConv writes over its residual Z the same way (a ResNet block's output takes its
//             shortcut's bytes).
#pragma once

#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/lifetimes.h"

namespace xopt::planner {

struct AliasOptions {
  bool views = true;
  bool in_place = true;
};

enum class AliasKind { kNone, kView, kInPlace };

// For one entry of Lifetimes::values: the entry whose bytes it reuses (-1 for a root), and its
// root.
struct Alias {
  int source = -1;
  int root = -1;
  AliasKind kind = AliasKind::kNone;
};

// Op facts (kept here until ir/op_registry.h exposes them). The input whose bytes output `out` of
// `n` is by definition (a view), or nullptr.
const ir::Value* view_op_source(const ir::Node& n, size_t out);
// Same-shape elementwise ops whose kernels may write their output over an input of the same size.
bool is_elementwise(const ir::Node& n);
// BatchNormalization with only output 0 (inference: y = scale * (x - mean) / sqrt(var + eps) + B).
bool is_inference_batch_norm(const ir::Node& n);
// com.microsoft FusedConv: activation(Conv(X, W, B) + Z).
bool is_fused_conv(const ir::Node& n);
// The inputs whose bytes output 0 of `n` may overwrite, in order of preference: every input of an
// elementwise op, X of an inference BatchNormalization, Z of a FusedConv.
std::vector<size_t> in_place_inputs(const ir::Node& n);
// Whether input `input` of `n` is read element for element with output 0 (one of the above): the
// only inputs that may sit in the bytes output 0 is written to.
bool reads_in_place(const ir::Node& n, size_t input);

// The input that output `out` of `n` is planned as a view of: a view op whose input and output both
// live in the arena with the same static size. Order-independent (the memory-aware ordering uses
// it).
const ir::Value* planned_view_source(const ir::Node& n, size_t out, bool io_in_arena);

// Decides views and in-place reuse on `order` (the node order `lt` was computed on) and extends
// each root's `last` over the lifetimes of its aliases. Returns one Alias per entry of lt.values.
std::vector<Alias> apply_aliasing(const std::vector<const ir::Node*>& order, Lifetimes& lt,
                                  const AliasOptions& options = {});

}  // namespace xopt::planner
