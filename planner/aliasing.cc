#include "planner/aliasing.h"

#include <algorithm>

#include "ir/op_registry.h"

namespace xopt::planner {

const ir::Value* view_op_source(const ir::Node& n, size_t out) {
  return out == 0 && ir::is_view_node(n) ? n.input(0) : nullptr;
}

bool is_elementwise(const ir::Node& n) {
  const ir::OpInfo* op = ir::find_op(n);
  return op != nullptr && op->elementwise;
}

bool is_inference_batch_norm(const ir::Node& n) {
  if (!n.is("BatchNormalization")) return false;
  size_t outputs = 0;
  for (const ir::Value* v : n.outputs()) outputs += v != nullptr;
  if (outputs != 1) return false;  // the running statistics are only written in training
  if (n.opset() >= 14) return n.attr_int("training_mode", 0) == 0;
  if (n.opset() <= 6) return n.attr_int("is_test", 0) != 0 || n.num_outputs() == 1;
  return true;
}

bool is_fused_conv(const ir::Node& n) {
  return n.domain() == "com.microsoft" && n.op_type() == "FusedConv";
}

std::vector<size_t> in_place_inputs(const ir::Node& n) {
  std::vector<size_t> inputs;
  if (is_elementwise(n)) {
    for (size_t i = 0; i < n.num_inputs(); ++i) inputs.push_back(i);
  } else if (is_inference_batch_norm(n)) {
    inputs.push_back(0);  // X; scale, B, mean and var are per channel
  } else if (is_fused_conv(n) && n.num_inputs() > 3) {
    // Z, the residual: both executors accumulate the convolution onto it when it sits in Y's
    // bytes (cuDNN's beta = 1 blend or its fused alpha2 * Z term; the CPU GEMM with beta = 1).
    inputs.push_back(3);
  }
  return inputs;
}

bool reads_in_place(const ir::Node& n, size_t input) {
  const std::vector<size_t> inputs = in_place_inputs(n);
  return std::find(inputs.begin(), inputs.end(), input) != inputs.end();
}

const ir::Value* planned_view_source(const ir::Node& n, size_t out, bool io_in_arena) {
  const ir::Value* src = view_op_source(n, out);
  const ir::Value* dst = n.output(out);
  if (src == nullptr || dst == nullptr) return nullptr;
  if (!lives_in_arena(*src, io_in_arena) || !lives_in_arena(*dst, io_in_arena)) return nullptr;
  auto a = value_bytes(*src);
  auto b = value_bytes(*dst);
  if (!a.is_ok() || !b.is_ok() || *a != *b) return nullptr;
  return src;
}

std::vector<Alias> apply_aliasing(const std::vector<const ir::Node*>& order, Lifetimes& lt,
                                  const AliasOptions& options) {
  const size_t n = lt.values.size();
  std::vector<Alias> alias(n);
  std::vector<int> group_last(n);
  std::vector<bool> group_io(n);
  for (size_t i = 0; i < n; ++i) {
    alias[i].root = static_cast<int>(i);
    group_last[i] = lt.values[i].last;
    const ir::Value* v = lt.values[i].value;
    group_io[i] = v->is_graph_input() || v->is_graph_output();
  }
  auto join = [&](size_t member, size_t source, AliasKind kind) {
    const int root = alias[source].root;
    alias[member] = {static_cast<int>(source), root, kind};
    group_last[root] = std::max(group_last[root], lt.values[member].last);
    group_io[root] = group_io[root] || group_io[member];
  };
  auto index_of = [&](const ir::Value* v) -> int {
    auto it = lt.index.find(v);
    return it == lt.index.end() ? -1 : static_cast<int>(it->second);
  };
  for (size_t s = 0; s < order.size(); ++s) {
    const ir::Node& node = *order[s];
    for (size_t k = 0; k < node.num_outputs(); ++k) {
      const int out = index_of(node.output(k));
      if (out < 0) continue;
      if (options.views) {
        // io only matters for values outside the arena, which index_of already rejects.
        const ir::Value* src = planned_view_source(node, k, true);
        const int in = src != nullptr ? index_of(src) : -1;
        if (in >= 0) {
          join(static_cast<size_t>(out), static_cast<size_t>(in), AliasKind::kView);
          continue;
        }
      }
      if (!options.in_place || k != 0) continue;
      const Lifetime& o = lt.values[static_cast<size_t>(out)];
      const size_t elem = ir::dtype_size(o.value->dtype());
      for (size_t candidate : in_place_inputs(node)) {
        const ir::Value* x = node.input(candidate);
        const int in = x != nullptr ? index_of(x) : -1;
        if (in < 0) continue;
        const int root = alias[static_cast<size_t>(in)].root;
        // The input's bytes must die here and belong to no graph input or output.
        if (group_last[root] != static_cast<int>(s) || group_io[root]) continue;
        // Every input read from those bytes (x among them) must be one the op reads element for
        // element with its output, of the output's exact size and element size, so element i is
        // read before element i is written (no broadcast; a convolution's X never).
        bool aligned = true;
        for (size_t j = 0; j < node.num_inputs(); ++j) {
          const ir::Value* y = node.input(j);
          const int other = y != nullptr ? index_of(y) : -1;
          if (other < 0 || alias[static_cast<size_t>(other)].root != root) continue;
          aligned = aligned && reads_in_place(node, j) &&
                    lt.values[static_cast<size_t>(other)].bytes == o.bytes &&
                    ir::dtype_size(y->dtype()) == elem;
        }
        if (!aligned) continue;
        join(static_cast<size_t>(out), static_cast<size_t>(in), AliasKind::kInPlace);
        break;
      }
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (alias[i].root == static_cast<int>(i)) lt.values[i].last = group_last[i];
  return alias;
}

}  // namespace xopt::planner
