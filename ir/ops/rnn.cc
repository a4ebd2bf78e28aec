// Recurrent layers: RNN, GRU and LSTM, and onnxruntime's com.microsoft DynamicQuantizeLSTM (an
// LSTM whose W and R are int8 or uint8 with scales and zero points, stored transposed).
#include "ir/ops/op_helpers.h"

namespace xopt::ir::ops {
namespace {

// What differs between the recurrent ops: gates per direction and the input count.
struct RecurrentKind {
  int64_t gates;
  size_t max_inputs;
  bool quantized;  // DynamicQuantizeLSTM: W [dirs, input, 4H], R [dirs, H, 4H]
};

template <int64_t Gates, size_t MaxInputs, bool Quantized>
Status infer_recurrent(InferenceContext& ctx) {
  constexpr RecurrentKind kind{Gates, MaxInputs, Quantized};
  XOPT_RETURN_IF_ERROR(check_arity(ctx, 3, kind.max_inputs));
  if (kind.quantized)
    for (size_t i = 8; i < 12; ++i)
      if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
  if (kind.gates != 4 && ctx.num_outputs() > 2)
    return ctx.error("has " + std::to_string(ctx.num_outputs()) + " outputs; at most 2");
  const Node& n = ctx.node();
  const std::string direction = n.attr_string("direction", "forward");
  int64_t dirs = 0;
  if (direction == "forward" || direction == "reverse")
    dirs = 1;
  else if (direction == "bidirectional")
    dirs = 2;
  else
    return ctx.error("direction '" + direction + "' is not forward, reverse or bidirectional");
  const int64_t layout = kind.quantized || ctx.opset() < 14 ? 0 : n.attr_int("layout", 0);
  if (layout != 0 && layout != 1) return ctx.error("layout must be 0 or 1");

  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const Shape& r = ctx.input_shape(2);
  for (auto [s, what] : {std::pair{&x, "X"}, {&w, "W"}, {&r, "R"}})
    if (s->has_rank() && s->rank() != 3)
      return ctx.error(std::string(what) + " must have rank 3, got " + str(*s));
  Dim hidden;
  if (n.has_attr("hidden_size")) {
    hidden = Dim(n.attr_int("hidden_size", 0));
    if (hidden.value <= 0) return ctx.error("hidden_size must be positive");
  } else if (r.has_rank()) {
    hidden = kind.quantized ? r[1] : r[2];
  }
  // W's direction count and gate rows (columns when quantized) must agree.
  if (w.has_rank()) {
    if (w[0].is_known() && w[0].value != dirs)
      return ctx.error("W " + str(w) + " has " + w[0].to_string() + " directions, expected " +
                       std::to_string(dirs) + " for direction '" + direction + "'");
    const Dim& rows = kind.quantized ? w[2] : w[1];
    if (rows.is_known() && hidden.is_known() && rows.value != kind.gates * hidden.value)
      return ctx.error("W " + str(w) + " does not hold " + std::to_string(kind.gates) +
                       " gates of hidden size " + hidden.to_string());
    const Dim& in = kind.quantized ? w[1] : w[2];
    if (x.has_rank() && in.is_known() && x[2].is_known() && in.value != x[2].value)
      return ctx.error("W " + str(w) + " expects input size " + in.to_string() + ", X is " +
                       str(x));
  }
  const DType t = ctx.input_dtype(0);
  const Dim seq = x.has_rank() ? x[layout == 0 ? 0 : 1] : Dim();
  const Dim batch = x.has_rank() ? x[layout == 0 ? 1 : 0] : Dim();
  const Dim d(dirs);
  if (layout == 0) {
    ctx.set_output(0, t, Shape({seq, d, batch, hidden}));
    ctx.set_output(1, t, Shape({d, batch, hidden}));
    ctx.set_output(2, t, Shape({d, batch, hidden}));
  } else {
    ctx.set_output(0, t, Shape({batch, seq, d, hidden}));
    ctx.set_output(1, t, Shape({batch, d, hidden}));
    ctx.set_output(2, t, Shape({batch, d, hidden}));
  }
  return Status::ok();
}

}  // namespace

void register_rnn_ops(OpList& ops) {
  // The layout attribute arrives at 14; earlier versions differ only in attributes this reads the
  // same way (GRU's linear_before_reset from 3, defaulting to 0).
  ops.push_back(make_op("RNN", 1, 13, infer_recurrent<1, 6, false>));
  ops.push_back(make_op("RNN", 14, kMaxOpset, infer_recurrent<1, 6, false>));
  ops.push_back(make_op("GRU", 1, 13, infer_recurrent<3, 6, false>));
  ops.push_back(make_op("GRU", 14, kMaxOpset, infer_recurrent<3, 6, false>));
  ops.push_back(make_op("LSTM", 1, 13, infer_recurrent<4, 8, false>));
  ops.push_back(make_op("LSTM", 14, kMaxOpset, infer_recurrent<4, 8, false>));
  ops.push_back(
      make_op("DynamicQuantizeLSTM", 1, 1, infer_recurrent<4, 12, true>, kNoFlags, kMsDomain));
}

}  // namespace xopt::ir::ops
