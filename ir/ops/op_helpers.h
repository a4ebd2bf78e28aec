// Helpers shared by the op families' inference functions (ir/ops/*.cc), and the families'
// registration functions called by ir/op_registry.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/op_registry.h"

namespace xopt::ir::ops {

using OpList = std::vector<OpInfo>;

void register_elementwise_ops(OpList& ops);
void register_binary_ops(OpList& ops);
void register_conv_pool_ops(OpList& ops);
void register_norm_ops(OpList& ops);
void register_math_ops(OpList& ops);
void register_tensor_ops(OpList& ops);
void register_slice_split_ops(OpList& ops);
void register_gather_ops(OpList& ops);
void register_constant_ops(OpList& ops);
void register_shape_ops(OpList& ops);
void register_reduce_ops(OpList& ops);
void register_resize_ops(OpList& ops);
void register_contrib_ops(OpList& ops);
void register_rnn_ops(OpList& ops);
void register_quant_ops(OpList& ops);
void register_attention_ops(OpList& ops);
void register_signal_ops(OpList& ops);
void register_vision_ops(OpList& ops);
void register_index_ops(OpList& ops);
void register_control_flow_ops(OpList& ops);
void register_random_ops(OpList& ops);
void register_sequence_ops(OpList& ops);
void register_ml_ops(OpList& ops);         // ai.onnx.ml
void register_quant_ort_ops(OpList& ops);  // com.microsoft QLinear*, QGemm

inline constexpr const char* kMsDomain = "com.microsoft";

// Planner facts of an entry (OpInfo::is_view, OpInfo::elementwise).
enum OpFlags : unsigned { kNoFlags = 0, kView = 1, kPointwise = 2 };
inline OpFlags operator|(OpFlags a, OpFlags b) {
  return static_cast<OpFlags>(unsigned(a) | unsigned(b));
}

// An entry for `op_type` at opsets [since, until].
inline OpInfo make_op(std::string op_type, int since, int until, InferFn infer,
                      OpFlags flags = kNoFlags, std::string domain = "") {
  OpInfo op;
  op.domain = std::move(domain);
  op.op_type = std::move(op_type);
  op.since_version = since;
  op.until_version = until;
  op.infer = infer;
  op.is_view = (flags & kView) != 0;
  op.elementwise = (flags & kPointwise) != 0;
  return op;
}

// ---- dims and shapes ----

// "[1,3,N]" / "[*]" for messages.
inline std::string str(const Shape& s) {
  return s.to_string();
}

// ---- arithmetic that cannot overflow ----

// a*b and a+b; nullopt past int64.
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
std::optional<int64_t> checked_add(int64_t a, int64_t b);
// Two's-complement a+b, a-b, a*b: what an integer Add/Sub/Mul computes at run time (data
// propagation of int64 tensors; plain signed overflow would be undefined).
int64_t wrapping_add(int64_t a, int64_t b);
int64_t wrapping_sub(int64_t a, int64_t b);
int64_t wrapping_mul(int64_t a, int64_t b);
// Dim arithmetic: known when both are and the result is at most kMaxDim, else unknown (a sum
// with a known 0 keeps the other dim, a product with 1 too).
Dim add_dims(const Dim& a, const Dim& b);
Dim mul_dims(const Dim& a, const Dim& b);
// The rank given by a 1-D shape input of `len` elements (Reshape's shape, Expand's, ...): an error
// past kMaxRank.
Result<size_t> rank_of_shape_input(const InferenceContext& ctx, const Dim& len);

// Numpy broadcasting of two dims; nullopt when both are known, differ and neither is 1.
std::optional<Dim> broadcast_dim(const Dim& a, const Dim& b);
// Multidirectional broadcasting; unknown rank when either is. Error text names both shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// Unidirectional: `b` must broadcast to `a` (PRelu slope, Expand checks). Error when it cannot.
Status check_unidirectional(const Shape& a, const Shape& b);

// A product of dims kept as a known factor times a multiset of symbols, so that [N,3,4] flattened
// is 12*N and divides back by N.
struct DimProduct {
  int64_t factor = 1;  // meaningless once unknown (an unknown dim, or a product past int64)
  std::vector<std::string> symbols;
  bool unknown = false;

  void mul(const Dim& d);
  // This / o when exact (o's symbols all cancel and the factor divides); nullopt otherwise.
  std::optional<DimProduct> div(const DimProduct& o) const;
  // A single dim: known, a lone symbol, or unknown.
  Dim to_dim() const;
};
DimProduct product(const Shape& s, size_t begin, size_t end);

// Axis in [-rank, rank) normalized to [0, rank); error otherwise. `what` names the attribute.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what);
// Several axes; duplicates are an error.
Result<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                            const std::string& what);

// ---- common inference functions ----

// Output 0 has input 0's type and shape (and its data for Identity-like ops).
Status infer_same_as_input(InferenceContext& ctx);
// Output 0 has input 0's shape and type bool.
Status infer_same_shape_bool(InferenceContext& ctx);

// Checks the node has at least `min` inputs (present ones for required positions) and at most
// `max`.
Status check_arity(const InferenceContext& ctx, size_t min_inputs, size_t max_inputs);
// Error when two present inputs have known, different element types.
Status check_same_dtype(const InferenceContext& ctx, size_t a, size_t b);

// Shared with the com.microsoft fused ops (FusedConv, FusedGemm, FusedMatMul).
// Conv's output (input 0 X, input 1 W, input 2 optional bias); `max_inputs` checks the arity.
Status infer_conv_like(InferenceContext& ctx, size_t max_inputs);
// Conv's output shape for X at input `x`, W at input `w` and an optional bias at input `bias` (a
// 1-D tensor of the output channels); QLinearConv and ConvInteger place them elsewhere.
Result<Shape> conv_output_shape(const InferenceContext& ctx, size_t x, size_t w, size_t bias);
// Gemm's output [M, N] with transA/transB; `c_required` for Gemm before opset 11.
Status infer_gemm_like(InferenceContext& ctx, bool c_required);
// MatMul of two shapes (numpy semantics: 1-D operands promoted, batch dims broadcast).
Result<Shape> matmul_shape(const Shape& a, const Shape& b);

}  // namespace xopt::ir::ops
