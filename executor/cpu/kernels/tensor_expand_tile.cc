// Expand (broadcast to a shape) and Tile (repeat along each axis): both are strided reads of the
// input, with stride 0 along the repeated dims.
#include "executor/cpu/broadcast.h"
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

// Expand: y = x broadcast (both ways) with `shape`.
Status expand(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  XOPT_ASSIGN_OR_RETURN(auto shape, int_input(ctx, 1, "shape"));
  for (int64_t d : shape)
    if (d < 0) return ctx.error("shape " + ir::dims_string(shape) + " has a negative dim");
  auto out = broadcast_shapes({x->dims(), shape});
  if (!out.is_ok()) return out.status().with_context(ctx.node().describe() + ": ");
  return emit_strided(ctx, *x, *out, broadcast_strides(x->dims(), *out));
}

// Tile: output dim d is repeats[d] * x.dims[d]; read as dims [r0, d0, r1, d1, ...] with stride 0
// along every r.
Status tile(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "input"));
  XOPT_ASSIGN_OR_RETURN(auto repeats, int_input(ctx, 1, "repeats"));
  if (repeats.size() != x->rank())
    return ctx.error("repeats " + ir::dims_string(repeats) + " do not match the input rank " +
                     std::to_string(x->rank()));
  const auto st = strides_of(x->dims());
  std::vector<int64_t> out_dims, view_dims, view_strides;
  for (size_t i = 0; i < x->rank(); ++i) {
    if (repeats[i] < 0)
      return ctx.error("repeats " + ir::dims_string(repeats) + " has a negative entry");
    out_dims.push_back(repeats[i] * x->dims()[i]);
    view_dims.insert(view_dims.end(), {repeats[i], x->dims()[i]});
    view_strides.insert(view_strides.end(), {0, st[i]});
  }
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), out_dims));
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    strided_copy<U>(elems<U>(*x), mutable_elems<U>(*y), view_dims, view_strides);
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Expand", 8, kLatestOpset, expand);
XOPT_CPU_KERNEL("", "Tile", 6, kLatestOpset, tile);

}  // namespace xopt::exec
