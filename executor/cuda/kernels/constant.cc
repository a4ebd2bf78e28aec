// Constant, Shape, Size and ConstantOfShape on the GPU: their values are known at compile time
// (static shapes), so the launch writes bytes carried in its kernel parameters. Constants are
// normally folded into initializers (xopt --passes=fold); unfolded ones up to 64 KiB are written
// here. Semantics follow executor/cpu/kernels/elementwise_identity.cc and tensor_shape.cc.
#include <algorithm>
#include <cstring>

#include "executor/cuda/kernels/compile_util.h"
#include "executor/cuda/kernels/constant.cuh"

namespace xopt::cuda {
namespace {

constexpr size_t kMaxConstantBytes = 64 * 1024;

// A launch writing `bytes` (the output's every byte) into y.
Result<Launch> write_launch(const CompileContext& ctx, const DeviceTensor& y, const void* bytes,
                            size_t n) {
  if (n != y.nbytes())
    return ctx.error("value has " + std::to_string(n) + " bytes, the output " +
                     std::to_string(y.nbytes()));
  if (n > kMaxConstantBytes)
    return ctx.unsupported("a constant of " + std::to_string(n) +
                           " bytes computed on the GPU (fold constants first)");
  std::vector<ConstChunk> chunks;
  for (size_t at = 0; at < n; at += kConstChunkBytes) {
    ConstChunk c;
    c.bytes = static_cast<uint32_t>(std::min(kConstChunkBytes, n - at));
    std::memcpy(c.data, static_cast<const unsigned char*>(bytes) + at, c.bytes);
    chunks.push_back(c);
  }
  auto* dst = static_cast<unsigned char*>(y.data);
  return Launch([chunks, dst](const LaunchEnv& env) -> Status {
    size_t at = 0;
    for (const ConstChunk& c : chunks) {
      XOPT_RETURN_IF_ERROR(check_launch(launch_write_chunk(dst + at, c, env.stream)));
      at += c.bytes;
    }
    return Status::ok();
  });
}

Result<Launch> constant(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  const ir::Node& n = ctx.node();
  ir::Tensor t;
  if (n.has_attr("value")) {
    t = n.attr_tensor("value");
  } else if (const auto* f = n.attr("value_float"); f != nullptr) {
    t = ir::Tensor::scalar<float>(f->f());
  } else if (const auto* fs = n.attr("value_floats"); fs != nullptr) {
    t = ir::Tensor::of<float>({fs->floats_size()}, {fs->floats().begin(), fs->floats().end()});
  } else if (const auto* i = n.attr("value_int"); i != nullptr) {
    t = ir::Tensor::scalar<int64_t>(i->i());
  } else if (const auto* is = n.attr("value_ints"); is != nullptr) {
    t = ir::Tensor::of<int64_t>({is->ints_size()}, {is->ints().begin(), is->ints().end()});
  } else {
    return ctx.unsupported("this form of Constant (sparse or string) on the GPU");
  }
  if (t.dtype() == ir::DType::kString || ir::dtype_size(t.dtype()) == 0)
    return ctx.unsupported("a " + type_text(t.dtype()) + " constant on the GPU");
  if (t.dtype() != y->dtype || t.numel() != y->numel())
    return ctx.error("value does not match the planned output");
  if (t.numel() == 0) return no_op_launch();
  return write_launch(ctx, *y, t.raw_data(), t.nbytes());
}

// Shape: the input's dims [start, end) (start / end from opset 15) as int64.
Result<Launch> shape(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  const auto rank = static_cast<int64_t>(x->rank());
  int64_t start = 0, end = rank;
  if (ctx.opset() >= 15) {
    start = ctx.node().attr_int("start", 0);
    end = ctx.node().attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
  }
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(x->dims[static_cast<size_t>(i)]);
  if (y->dtype != ir::DType::kInt64 || y->numel() != static_cast<int64_t>(dims.size()))
    return ctx.error("output must be int64 [" + std::to_string(dims.size()) + "]");
  if (dims.empty()) return no_op_launch();
  return write_launch(ctx, *y, dims.data(), dims.size() * sizeof(int64_t));
}

Result<Launch> size(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* x, need_input(ctx, 0));
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  if (y->dtype != ir::DType::kInt64 || y->numel() != 1)
    return ctx.error("output must be an int64 scalar");
  const int64_t n = x->numel();
  return write_launch(ctx, *y, &n, sizeof n);
}

// ConstantOfShape: the planned output filled with `value` (default float 0).
Result<Launch> constant_of_shape(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const DeviceTensor* y, need_output(ctx, 0));
  uint64_t bits = 0;
  ir::DType t = ir::DType::kFloat;
  if (ctx.node().has_attr("value")) {
    const ir::Tensor v = ctx.node().attr_tensor("value");
    if (v.numel() != 1) return ctx.error("value must hold one element");
    t = v.dtype();
    const size_t es = ir::dtype_size(t);
    if (es != 1 && es != 2 && es != 4 && es != 8)
      return ctx.unsupported("a " + type_text(t) + " value on the GPU");
    std::memcpy(&bits, v.raw_data(), es);
  }
  if (y->dtype != t) return ctx.error("output type differs from the value's");
  const size_t es = ir::dtype_size(t);
  const int64_t n = y->numel();
  if (n == 0) return no_op_launch();
  void* dst = y->data;
  return Launch([=](const LaunchEnv& env) {
    return check_launch(launch_fill(dst, es, bits, n, env.stream));
  });
}

}  // namespace

XOPT_CUDA_KERNEL_TYPES("", "Constant", 1, kLastOpset, constant,
                       "any fixed-size type (up to 64 KiB unfolded)");
XOPT_CUDA_KERNEL_TYPES("", "Shape", 1, kLastOpset, shape, "any input; int64 output");
XOPT_CUDA_KERNEL_TYPES("", "Size", 1, kLastOpset, size, "any input; int64 output");
XOPT_CUDA_KERNEL_TYPES("", "ConstantOfShape", 9, kLastOpset, constant_of_shape,
                       "any 1/2/4/8-byte value type");

}  // namespace xopt::cuda
