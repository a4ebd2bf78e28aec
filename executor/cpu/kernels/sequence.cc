// Sequence ops: SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceAt, SequenceErase,
// SequenceLength, SplitToSequence, ConcatFromSequence. A sequence is an ExecValue holding its
// tensors outside the memory plan (planner/README.md, "Sequences and optionals"): a tensor going
// in is copied (own_copy), sequences made from it share those bytes, and one coming out
// (SequenceAt) is copied into its planned slot.
#include <string>
#include <vector>

#include "executor/cpu/kernel.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

using ir::Tensor;

Result<const ExecValue*> sequence_input(const KernelContext& ctx, size_t i) {
  const ExecValue* v = ctx.input_value(i);
  if (v == nullptr || !v->is_sequence()) {
    if (v == nullptr && ctx.input(i) == nullptr)
      return ctx.error("input " + std::to_string(i) + " (a sequence) is missing");
    return ctx.error("input " + std::to_string(i) + " is a " +
                     (v != nullptr ? v->describe() : std::string("tensor")) + ", not a sequence");
  }
  return v;
}

// The position input i (a scalar int32 or int64) made non-negative: in [0, n) for at/erase, in
// [0, n] for insert (end_ok). Absent: `dflt`.
Result<int64_t> position(const KernelContext& ctx, size_t i, int64_t n, bool end_ok, int64_t dflt) {
  const Tensor* p = ctx.input(i);
  if (p == nullptr) return dflt;
  if ((p->dtype() != ir::DType::kInt32 && p->dtype() != ir::DType::kInt64) || p->numel() != 1)
    return ctx.error("position must be one int32 or int64, got " +
                     std::string(ir::dtype_name(p->dtype())) + ir::dims_string(p->dims()));
  const int64_t pos = p->as_int64(0);
  const int64_t hi = end_ok ? n : n - 1;
  if (pos < -n || pos > hi)
    return ctx.error("position " + std::to_string(pos) + " is out of range for a sequence of " +
                     std::to_string(n) + (end_ok ? " (inserting)" : ""));
  return pos < 0 ? pos + n : pos;
}

Status sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr)
      return ctx.error("input " + std::to_string(i) + " is missing or not a tensor");
    if (!items.empty() && t->dtype() != items[0].dtype())
      return ctx.error("inputs mix " + std::string(ir::dtype_name(items[0].dtype())) + " and " +
                       std::string(ir::dtype_name(t->dtype())));
    items.push_back(own_copy(*t));
  }
  if (items.empty()) return ctx.error("needs at least one input");
  const ir::DType d = items[0].dtype();
  return ctx.set_output_value(0, ExecValue::of_sequence(std::move(items), d));
}

Status sequence_empty(KernelContext& ctx) {
  const auto d = static_cast<ir::DType>(ctx.node().attr_int("dtype", 1));
  return ctx.set_output_value(0, ExecValue::of_sequence({}, d));
}

Status sequence_insert(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ExecValue* seq, sequence_input(ctx, 0));
  const Tensor* t = ctx.input(1);
  if (t == nullptr) return ctx.error("tensor to insert is missing or not a tensor");
  if (seq->elem_dtype() != ir::DType::kUndefined && t->dtype() != seq->elem_dtype())
    return ctx.error("inserts " + std::string(ir::dtype_name(t->dtype())) + " into a sequence of " +
                     std::string(ir::dtype_name(seq->elem_dtype())));
  const auto n = static_cast<int64_t>(seq->items().size());
  XOPT_ASSIGN_OR_RETURN(int64_t pos, position(ctx, 2, n, /*end_ok=*/true, n));
  std::vector<Tensor> items = seq->items();
  items.insert(items.begin() + pos, own_copy(*t));
  return ctx.set_output_value(0, ExecValue::of_sequence(std::move(items), t->dtype()));
}

Status sequence_at(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ExecValue* seq, sequence_input(ctx, 0));
  const auto n = static_cast<int64_t>(seq->items().size());
  if (ctx.input(1) == nullptr) return ctx.error("position is missing");
  XOPT_ASSIGN_OR_RETURN(int64_t pos, position(ctx, 1, n, /*end_ok=*/false, 0));
  return ctx.forward(0, seq->items()[static_cast<size_t>(pos)]);
}

Status sequence_erase(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ExecValue* seq, sequence_input(ctx, 0));
  const auto n = static_cast<int64_t>(seq->items().size());
  if (n == 0) return ctx.error("cannot erase from an empty sequence");
  XOPT_ASSIGN_OR_RETURN(int64_t pos, position(ctx, 1, n, /*end_ok=*/false, n - 1));
  std::vector<Tensor> items = seq->items();
  items.erase(items.begin() + pos);
  return ctx.set_output_value(0, ExecValue::of_sequence(std::move(items), seq->elem_dtype()));
}

Status sequence_length(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ExecValue* seq, sequence_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, ir::DType::kInt64, {}));
  *y->mutable_data<int64_t>() = static_cast<int64_t>(seq->items().size());
  return Status::ok();
}

// Copies `count` entries of `axis` starting at `start` out of `x` (dims[axis] = len) into `out`,
// whose axis has `count` entries starting at `out_start` of `out_len`.
template <typename U>
void copy_along_axis(const Tensor& x, size_t axis, int64_t start, int64_t count, Tensor& out,
                     int64_t out_start) {
  const auto& dims = x.dims();
  const int64_t outer = product(dims, 0, axis), len = dims[axis];
  const int64_t inner = product(dims, axis + 1, dims.size());
  const int64_t out_len = out.dims()[axis];
  const U* src = elems<U>(x);
  U* dst = mutable_elems<U>(out);
  for (int64_t o = 0; o < outer; ++o)
    std::copy(src + (o * len + start) * inner, src + (o * len + start + count) * inner,
              dst + (o * out_len + out_start) * inner);
}

Status split_to_sequence(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "input"));
  const auto rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.error("cannot split a scalar");
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  const int64_t len = x->dims()[a];
  std::vector<int64_t> lengths;
  bool squeeze = false;
  if (const Tensor* split = ctx.input(1)) {
    XOPT_ASSIGN_OR_RETURN(std::vector<int64_t> s, int_input(ctx, 1, "split"));
    if (split->rank() == 0) {  // chunks of that size, the last one shorter when it does not divide
      if (s[0] <= 0) return ctx.error("split must be positive, got " + std::to_string(s[0]));
      for (int64_t at = 0; at < len; at += s[0]) lengths.push_back(std::min(s[0], len - at));
    } else if (split->rank() == 1) {
      int64_t sum = 0;
      for (int64_t v : s) {
        if (v < 0) return ctx.error("split has a negative length " + std::to_string(v));
        sum += v;
      }
      if (sum != len)
        return ctx.error("split " + ir::dims_string(s) + " sums to " + std::to_string(sum) +
                         ", not to " + std::to_string(len) + " (axis " + std::to_string(axis) +
                         ")");
      lengths = s;
    } else {
      return ctx.error("split must be a scalar or 1-D, got rank " + std::to_string(split->rank()));
    }
  } else {
    lengths.assign(static_cast<size_t>(len), 1);
    squeeze = ctx.node().attr_int("keepdims", 1) == 0;
  }
  std::vector<Tensor> items;
  int64_t start = 0;
  for (int64_t l : lengths) {
    std::vector<int64_t> dims = x->dims();
    dims[a] = l;
    Tensor part(x->dtype(), dims);
    if (x->dtype() == ir::DType::kString)
      part = Tensor::of_strings(dims, std::vector<std::string>(static_cast<size_t>(product(dims))));
    XOPT_RETURN_IF_ERROR(dispatch_by_size(x->dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      copy_along_axis<U>(*x, a, start, l, part, 0);
      return Status::ok();
    }));
    start += l;
    if (squeeze) {
      dims.erase(dims.begin() + axis);
      part = x->dtype() == ir::DType::kString ? Tensor::of_strings(dims, part.strings())
                                              : part.reshaped(dims);
    }
    items.push_back(std::move(part));
  }
  return ctx.set_output_value(0, ExecValue::of_sequence(std::move(items), x->dtype()));
}

Status concat_from_sequence(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ExecValue* seq, sequence_input(ctx, 0));
  if (!ctx.node().has_attr("axis")) return ctx.error("attribute 'axis' is required");
  const bool new_axis = ctx.node().attr_int("new_axis", 0) != 0;
  const auto& items = seq->items();
  if (items.empty()) return ctx.error("cannot concatenate an empty sequence");
  const auto elem_rank = static_cast<int64_t>(items[0].rank());
  const int64_t rank = elem_rank + (new_axis ? 1 : 0);
  if (rank == 0) return ctx.error("cannot concatenate scalars without new_axis");
  XOPT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.node().attr_int("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  // With new_axis each element gains a length-1 axis there; then it is a plain concatenation.
  std::vector<Tensor> parts;
  std::vector<int64_t> out_dims;
  for (size_t k = 0; k < items.size(); ++k) {
    const Tensor& t = items[k];
    if (t.dtype() != items[0].dtype())
      return ctx.error("the sequence mixes " + std::string(ir::dtype_name(items[0].dtype())) +
                       " and " + std::string(ir::dtype_name(t.dtype())));
    std::vector<int64_t> dims = t.dims();
    if (static_cast<int64_t>(dims.size()) != elem_rank)
      return ctx.error("element " + std::to_string(k) + " has shape " + ir::dims_string(dims) +
                       " but element 0 has " + ir::dims_string(items[0].dims()));
    if (new_axis) dims.insert(dims.begin() + axis, 1);
    if (k == 0) {
      out_dims = dims;
    } else {
      for (size_t d = 0; d < dims.size(); ++d)
        if (d != a && dims[d] != out_dims[d])
          return ctx.error("element " + std::to_string(k) + " has shape " +
                           ir::dims_string(t.dims()) + ", which does not fit element 0's " +
                           ir::dims_string(items[0].dims()) + " along axis " +
                           std::to_string(axis));
      out_dims[a] += dims[a];
    }
    parts.push_back(t.dtype() == ir::DType::kString ? Tensor::of_strings(dims, t.strings())
                                                    : t.reshaped(dims));
  }
  XOPT_ASSIGN_OR_RETURN(Tensor * y, ctx.output_uninit(0, items[0].dtype(), out_dims));
  if (y->dtype() == ir::DType::kString)
    y->mutable_strings().assign(static_cast<size_t>(product(out_dims)), std::string());
  return dispatch_by_size(y->dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    int64_t at = 0;
    for (const Tensor& p : parts) {
      copy_along_axis<U>(p, a, 0, p.dims()[a], *y, at);
      at += p.dims()[a];
    }
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "SequenceConstruct", 11, kLatestOpset, sequence_construct);
XOPT_CPU_KERNEL("", "SequenceEmpty", 11, kLatestOpset, sequence_empty);
XOPT_CPU_KERNEL("", "SequenceInsert", 11, kLatestOpset, sequence_insert);
XOPT_CPU_KERNEL("", "SequenceAt", 11, kLatestOpset, sequence_at);
XOPT_CPU_KERNEL("", "SequenceErase", 11, kLatestOpset, sequence_erase);
XOPT_CPU_KERNEL("", "SequenceLength", 11, kLatestOpset, sequence_length);
XOPT_CPU_KERNEL("", "SplitToSequence", 11, kLatestOpset, split_to_sequence);
XOPT_CPU_KERNEL("", "ConcatFromSequence", 11, kLatestOpset, concat_from_sequence);

}  // namespace xopt::exec
