// Transpose: y[i_perm[0], ..., i_perm[r-1]] = x[i_0, ..., i_{r-1}]; perm defaults to reversal.
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

Status transpose(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  const size_t rank = x->rank();
  std::vector<int64_t> perm = ctx.node().attr_ints("perm");
  if (!ctx.node().has_attr("perm"))
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank)
    return ctx.error("perm " + ir::dims_string(perm) + " does not match the input rank " +
                     std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    XOPT_ASSIGN_OR_RETURN(p, normalize_axis(ctx, p, static_cast<int64_t>(rank), "perm entry"));
    if (seen[static_cast<size_t>(p)])
      return ctx.error("perm " + ir::dims_string(perm) + " repeats an axis");
    seen[static_cast<size_t>(p)] = true;
  }
  const auto in_strides = strides_of(x->dims());
  std::vector<int64_t> out_dims(rank), src_strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_dims[i] = x->dims()[static_cast<size_t>(perm[i])];
    src_strides[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  return emit_strided(ctx, *x, out_dims, src_strides);
}

}  // namespace

XOPT_CPU_KERNEL("", "Transpose", 1, kLatestOpset, transpose);

}  // namespace xopt::exec
