#include "planner/workspace.h"

#include <algorithm>

#include "planner/intervals.h"

namespace xopt::planner {
namespace {

Result<std::vector<int64_t>> static_dims(const ir::Node& n, const ir::Value* v, const char* what) {
  if (v == nullptr || !v->shape().is_static() || v->shape().rank() < 3)
    return invalid_argument(n.describe() + ": the workspace model needs the static shape of its " +
                            what +
                            (v ? " '" + v->name() + "' (has " + v->shape().to_string() + ")"
                               : std::string(" (absent)")));
  return v->shape().static_dims();
}

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

int64_t product(std::vector<int64_t>::const_iterator b, std::vector<int64_t>::const_iterator e) {
  int64_t p = 1;
  for (; b != e; ++b) p *= *b;
  return p;
}

// A kernel that reads its input directly as a GEMM operand needs no column buffer.
bool is_pointwise(const ir::Node& n, const std::vector<int64_t>& kernel) {
  return all_equal(kernel, 1) && all_equal(n.attr_ints("strides"), 1) &&
         all_equal(n.attr_ints("pads"), 0);
}

// com.microsoft MultiHeadAttention: none for the fused kernel (attention_fused_applies); otherwise,
// for one batch chunk, the score matrices of every (batch, head) pair, Q, K and V split into heads
// when a bias has to be added first or the batch is larger than 1 (K and V go to present outputs
// instead when those are asked for), and at batch > 1 the output heads before they are gathered
// (executor/cuda/kernels/attention.cc).
Result<size_t> attention_workspace_bytes(const ir::Node& n) {
  const ir::Value* q = n.input(0);
  const ir::Value* k = n.input(1);
  const ir::Value* v = n.input(2);
  if (q == nullptr || k == nullptr || v == nullptr) return size_t{0};  // packed forms: none
  for (const ir::Value* x : {q, k, v})
    if (!x->shape().is_static())
      return invalid_argument(n.describe() + ": the workspace model needs the static shape of '" +
                              x->name() + "' (has " + x->shape().to_string() + ")");
  const auto qd = q->shape().static_dims(), kd = k->shape().static_dims(),
             vd = v->shape().static_dims();
  const int64_t heads = n.attr_int("num_heads", 1);
  if (qd.size() != 3 || heads <= 0) return size_t{0};
  const int64_t b = qd[0], s = qd[1], h = qd[2] / heads;
  const bool kv4 = kd.size() == 4;
  const int64_t l = kv4 ? kd[2] : kd[1];
  const int64_t hv = kv4 ? vd[3] : vd.back() / heads;
  const bool bias = n.input(3) != nullptr;
  const bool present_k = n.num_outputs() > 1 && n.output(1) != nullptr;
  const bool present_v = n.num_outputs() > 2 && n.output(2) != nullptr;
  if (attention_fused_applies(h, hv, present_k || present_v)) return size_t{0};
  const bool batched = b > 1;  // heads split and gathered so one call covers a chunk
  const size_t f = ir::dtype_size(q->dtype());
  // Elements per batch item of each buffer: scores, the split Q, K and V, the output heads.
  std::vector<int64_t> items = {heads * s * l};
  if (bias || batched) items.push_back(heads * s * h);
  if (!kv4 && (bias || batched) && !present_k) items.push_back(heads * l * h);
  if (!kv4 && (bias || batched) && !present_v) items.push_back(heads * l * hv);
  if (batched) items.push_back(heads * s * hv);
  size_t per_item = 0;
  for (int64_t e : items) per_item += static_cast<size_t>(e) * f;
  const int64_t chunk = attention_batch_chunk(b, per_item);
  size_t bytes = 0;
  for (int64_t e : items) bytes += align_up(static_cast<size_t>(chunk * e) * f, 256);
  return bytes;
}

}  // namespace

Result<size_t> node_workspace_bytes(const ir::Node& n) {
  if (n.domain() == "com.microsoft" && n.op_type() == "MultiHeadAttention")
    return attention_workspace_bytes(n);
  const bool onnx = n.domain().empty() || n.domain() == "ai.onnx";
  const bool conv = (onnx && (n.op_type() == "Conv" || n.op_type() == "ConvInteger" ||
                              n.op_type() == "QLinearConv")) ||
                    (n.domain() == "com.microsoft" && n.op_type() == "FusedConv");
  const bool conv_transpose = onnx && n.op_type() == "ConvTranspose";
  if (!conv && !conv_transpose) return size_t{0};
  const ir::Value* x = n.input(0);
  // QLinearConv: x, x_scale, x_zero_point, w, ...
  const ir::Value* w = n.op_type() == "QLinearConv" ? n.input(3) : n.input(1);
  XOPT_ASSIGN_OR_RETURN(auto wd, static_dims(n, w, "weight"));
  const std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  if (is_pointwise(n, kernel)) return size_t{0};
  const size_t elem = x != nullptr ? ir::dtype_size(x->dtype()) : 0;
  if (conv) {
    // Weight [M, C/group, k...], output [N, M, o...].
    XOPT_ASSIGN_OR_RETURN(auto yd, static_dims(n, n.output(0), "output"));
    const size_t im2col = static_cast<size_t>(wd[1] * product(kernel.begin(), kernel.end()) *
                                              product(yd.begin() + 2, yd.end())) *
                          elem;
    // cuDNN pads symmetrically: unequal begin/end pads (explicit, or SAME_*) take a padded copy
    // of the input first, at most (kernel extent - 1) larger per spatial dim.
    const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
    const std::vector<int64_t> pads = n.attr_ints("pads");
    const size_t r = kernel.size();
    bool asymmetric = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    for (size_t i = 0; i < r && pads.size() == 2 * r; ++i) asymmetric |= pads[i] != pads[i + r];
    if (!asymmetric) return im2col;
    XOPT_ASSIGN_OR_RETURN(auto xd, static_dims(n, x, "input"));
    const std::vector<int64_t> dil = n.attr_ints("dilations");
    int64_t padded = xd[0] * xd[1];
    for (size_t i = 0; i < r; ++i) {
      const int64_t extent = (kernel[i] - 1) * (dil.size() == r ? dil[i] : 1) + 1;
      const int64_t grow =
          pads.size() == 2 * r ? std::max(pads[i] + pads[i + r], extent - 1) : extent - 1;
      padded *= xd[2 + i] + grow;
    }
    return align_up(static_cast<size_t>(padded) * elem, 256) + im2col;
  }
  // ConvTranspose: weight [C, M/group, k...], input [N, C, d...].
  XOPT_ASSIGN_OR_RETURN(auto xd, static_dims(n, x, "input"));
  return static_cast<size_t>(wd[1] * product(kernel.begin(), kernel.end()) *
                             product(xd.begin() + 2, xd.end())) *
         elem;
}

bool attention_fused_applies(int64_t h, int64_t hv, bool present_outputs) {
  return !present_outputs && h >= 1 && h <= kAttentionFusedMaxHead && hv >= 1 &&
         hv <= kAttentionFusedMaxHead;
}

int64_t attention_batch_chunk(int64_t batch, size_t bytes_per_item) {
  if (batch <= 1 || bytes_per_item == 0) return std::max<int64_t>(batch, 1);
  const int64_t fits = static_cast<int64_t>(
      std::min<size_t>(static_cast<size_t>(batch), kAttentionChunkBytes / bytes_per_item));
  for (int64_t c = fits; c > 1; --c)
    if (batch % c == 0) return c;
  return 1;
}

Result<Workspace> plan_workspace(const std::vector<const ir::Node*>& order, size_t alignment) {
  Workspace ws;
  ws.per_node.reserve(order.size());
  for (const ir::Node* n : order) {
    XOPT_ASSIGN_OR_RETURN(size_t bytes, node_workspace_bytes(*n));
    ws.per_node.push_back(bytes);
    ws.bytes = std::max(ws.bytes, align_up(bytes, alignment));
  }
  return ws;
}

}  // namespace xopt::planner
