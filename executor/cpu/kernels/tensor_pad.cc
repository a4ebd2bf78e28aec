// Pad: modes constant, reflect, edge and wrap (19+). Negative pads crop: the input is cropped first
// and then padded, so reflect/edge/wrap read from the cropped extent (as onnxruntime does).
// Reflect and wrap keep going periodically when a pad is wider than the dim (as numpy.pad does).
#include "executor/cpu/kernels/tensor_util.h"

namespace xopt::exec {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Per axis: for every output coordinate, the input coordinate it reads, or -1 for the constant.
Result<std::vector<int64_t>> axis_map(const KernelContext& ctx, int64_t dim, int64_t begin,
                                      int64_t end, PadMode mode) {
  const int64_t crop_lo = begin < 0 ? -begin : 0, crop_hi = end < 0 ? -end : 0;
  const int64_t m = dim - crop_lo - crop_hi;  // length after cropping
  const int64_t pb = begin > 0 ? begin : 0, pe = end > 0 ? end : 0;
  if (m < 0) return ctx.error("pads crop more than the dim of " + std::to_string(dim));
  if (m == 0 && (pb > 0 || pe > 0) && mode != PadMode::kConstant)
    return ctx.error("cannot pad an empty axis in a non-constant mode");
  std::vector<int64_t> map(static_cast<size_t>(m + pb + pe));
  for (int64_t o = 0; o < m + pb + pe; ++o) {
    int64_t j = o - pb;
    if (j < 0 || j >= m) {
      switch (mode) {
        case PadMode::kConstant:
          j = -1;
          break;
        case PadMode::kEdge:
          j = j < 0 ? 0 : m - 1;
          break;
        case PadMode::kWrap:
          j = ((j % m) + m) % m;
          break;
        case PadMode::kReflect:
          if (m == 1) {
            j = 0;
          } else {
            const int64_t period = 2 * (m - 1);
            j = ((j % period) + period) % period;
            if (j >= m) j = period - j;
          }
          break;
      }
    }
    map[static_cast<size_t>(o)] = j < 0 ? -1 : j + crop_lo;
  }
  return map;
}

template <typename U>
void fill_padded(const U* src, U* dst, const std::vector<int64_t>& in_dims,
                 const std::vector<std::vector<int64_t>>& maps, const U& value) {
  const size_t rank = maps.size();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const auto st = strides_of(in_dims);
  std::vector<int64_t> out_dims(rank);
  for (size_t i = 0; i < rank; ++i) out_dims[i] = static_cast<int64_t>(maps[i].size());
  const int64_t total = product(out_dims), inner = out_dims[rank - 1];
  if (total == 0) return;
  const auto& last = maps[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < total; o += inner) {
    int64_t base = 0;
    bool constant_row = false;
    for (size_t k = 0; k + 1 < rank; ++k) {
      int64_t m = maps[k][static_cast<size_t>(idx[k])];
      if (m < 0) constant_row = true;
      base += m * st[k];
    }
    U* t = dst + o;
    if (constant_row) {
      std::fill(t, t + inner, value);
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t m = last[static_cast<size_t>(j)];
        t[j] = m < 0 ? value : src[base + m];
      }
    }
    for (size_t k = rank - 1; k-- > 0;) {
      if (++idx[k] < out_dims[k]) break;
      idx[k] = 0;
    }
  }
}

// The pad value as an element of the data's type, as raw bytes or a string.
Status pad_value(const KernelContext& ctx, const ir::Tensor& x, ir::Tensor* value) {
  *value = ir::Tensor(x.dtype(), {});
  if (ctx.opset() < 11) {
    float v = ctx.node().attr_float("value", 0.0f);
    return dispatch_all(x.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>)
        value->mutable_data<bool>()[0] = v != 0.0f;
      else
        value->mutable_data<T>()[0] = from_compute<T>(v);
      return Status::ok();
    });
  }
  const ir::Tensor* c = ctx.input(2);
  if (c == nullptr || c->numel() == 0) return Status::ok();  // zero / empty string
  if (c->dtype() != x.dtype())
    return ctx.error("constant_value is " + std::string(ir::dtype_name(c->dtype())) +
                     " but data is " + std::string(ir::dtype_name(x.dtype())));
  if (x.dtype() == ir::DType::kString) {
    value->mutable_strings()[0] = c->strings()[0];
  } else {
    std::memcpy(value->mutable_raw_data(), c->raw_data(), ir::dtype_size(x.dtype()));
  }
  return Status::ok();
}

Status pad(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, required_input(ctx, 0, "data"));
  const auto rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> pads, axes;
  if (ctx.opset() < 11) {
    pads = ctx.node().attr_ints("pads");
  } else {
    XOPT_ASSIGN_OR_RETURN(pads, int_input(ctx, 1, "pads"));
  }
  if (ctx.opset() >= 18 && has_input(ctx, 3)) {
    XOPT_ASSIGN_OR_RETURN(axes, int_input(ctx, 3, "axes"));
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size())
    return ctx.error("pads " + ir::dims_string(pads) + " should have 2 entries per axis (" +
                     std::to_string(axes.size()) + " axes)");
  std::string mode_name = ctx.node().attr_string("mode", "constant");
  PadMode mode;
  if (mode_name == "constant")
    mode = PadMode::kConstant;
  else if (mode_name == "reflect")
    mode = PadMode::kReflect;
  else if (mode_name == "edge")
    mode = PadMode::kEdge;
  else if (mode_name == "wrap" && ctx.opset() >= 19)
    mode = PadMode::kWrap;
  else
    return ctx.error("mode '" + mode_name + "' is not defined at opset " +
                     std::to_string(ctx.opset()));
  std::vector<int64_t> begin(x->rank(), 0), end(x->rank(), 0);
  std::vector<bool> seen(x->rank(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    XOPT_ASSIGN_OR_RETURN(int64_t a, normalize_axis(ctx, axes[i], rank, "axes entry"));
    if (seen[static_cast<size_t>(a)])
      return ctx.error("axes " + ir::dims_string(axes) + " repeat an axis");
    seen[static_cast<size_t>(a)] = true;
    begin[static_cast<size_t>(a)] = pads[i];
    end[static_cast<size_t>(a)] = pads[i + axes.size()];
  }
  std::vector<std::vector<int64_t>> maps;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < x->rank(); ++i) {
    XOPT_ASSIGN_OR_RETURN(auto map, axis_map(ctx, x->dims()[i], begin[i], end[i], mode));
    out_dims.push_back(static_cast<int64_t>(map.size()));
    maps.push_back(std::move(map));
  }
  ir::Tensor value;
  XOPT_RETURN_IF_ERROR(pad_value(ctx, *x, &value));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), out_dims));
  return dispatch_by_size(x->dtype(), [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    fill_padded<U>(elems<U>(*x), mutable_elems<U>(*y), x->dims(), maps, elems<U>(value)[0]);
    return Status::ok();
  });
}

}  // namespace

XOPT_CPU_KERNEL("", "Pad", 2, kLatestOpset, pad);

}  // namespace xopt::exec
